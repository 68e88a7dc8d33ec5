package dev.parley.server.agents;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.concurrent.ConcurrentHashMap;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Managed agents with the reference runner, real processes on a real hub: the smallest spec
 * runs as written, woken by its mail; concurrent sends are each answered once; an idle agent
 * stops and wakes again; failures are settled and logged; bad specs are refused whole.
 */
class ManagedAgentsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** The smallest useful spec, exactly as issue 12 writes it. */
    private static final String UPPER = """
            id: upper
            runner: command            # the reference runner: one process per envelope, text on stdin, stdout is the reply
            command: [sh, -c, "tr a-z A-Z"]
            wake: on-message
            idleTimeout: 20s
            """;

    @TempDir
    Path tmp;

    @Test
    void theSmallestSpecRunsAsWrittenAndAnswersEachOfManyConcurrentSendsOnce() throws Exception {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"), HubFixture::unthrottled)) {
            String lead = hub.createNode("lead", null);
            // Only the admin starts agents: the command runs on the hub's host.
            assertError(hub.post(lead, "/v1/agents", obj("spec", UPPER)), 403, "forbidden");
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=agent.start&decision=deny").body()
                    .contains("only the admin starts agents"));
            assertError(hub.post(lead, "/v1/agents", obj("spec", "not: [a spec")), 403, "forbidden");
            HubFixture.Resp started = hub.post(hub.admin(), "/v1/agents", obj("spec", UPPER));
            assertEquals(201, started.status(), started::toString);
            assertEquals(List.of("upper", "command", "on-message", "idle", "20000"), List.of(started.text("id"),
                    started.text("runner"), started.text("wake"), started.text("state"), started.text("idleTimeoutMs")),
                    started::toString);
            assertTrue(started.get("parent").isNull(), "a root node: the spec names no parent");
            assertEquals("managed", hub.get(hub.admin(), "/v1/nodes/upper").text("kind"));
            // lead and upper are in no group together: lead needs a grant, as for any node
            assertError(hub.send(lead, "upper", "knock"), 403, "acl_denied");
            assertEquals(201, hub.post(hub.admin(), "/v1/grants", obj("from", "lead", "to", "upper")).status());

            String first = hub.sendOk(lead, "upper", "hello").text("id");
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + first).text("state")));
            assertEquals("HELLO", reply(hub, lead, first).get("text").asText());
            // the run is the agent's turn, traced by the command adapter before the reply went
            JsonNode turn = hub.get(hub.admin(), "/v1/messages/" + first + "/trace").get("turns").get(0);
            assertEquals(List.of("upper", "command"), List.of(turn.get("node").asText(), turn.get("adapter").asText()));
            assertEquals(List.of("message", "tool_call", "tool_result", "message", "stop"),
                    turn.get("events").findValuesAsText("type"));
            assertEquals("HELLO", turn.at("/events/3/text").asText());

            // Many senders at once, while the agent works: each envelope answered once, with its own text.
            List<String> sent = Collections.synchronizedList(new ArrayList<>());
            List<Thread> senders = new ArrayList<>();
            for (int s = 0; s < 4; s++) {
                int n = s;
                senders.add(Thread.ofVirtual().start(() -> {
                    for (int i = 0; i < 5; i++) {
                        sent.add(hub.sendOk(lead, "upper", "job " + n + "-" + i).text("id"));
                    }
                }));
            }
            for (Thread t : senders) {
                t.join();
            }
            await().atMost(WAIT).until(() -> replies(hub, lead).size() == 21);
            Map<String, String> answers = answeredOnce(hub, lead);
            for (String id : sent) {
                String text = hub.get(lead, "/v1/messages/" + id).get("envelope").get("text").asText();
                assertEquals(text.toUpperCase(java.util.Locale.ROOT), answers.get(id));
            }
            // counted once the worker is done with each, just after its reply commits
            await().atMost(WAIT).until(() -> hub.get(hub.admin(), "/v1/agents/upper").json().get("settled").asInt()
                    == 21);
        }
    }

    @Test
    void commsAllowGrantsEachWayAndSkillsReachTheAgentCard() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String outsider = hub.createNode("outsider", null);
            assertError(hub.post(hub.admin(), "/v1/agents", obj("spec", """
                    id: helper
                    command: [cat]
                    comms: {allow: [nobody]}
                    """)), 400, "invalid_spec");
            assertEquals(404, hub.get(hub.admin(), "/v1/nodes/helper").status(), "nothing created");
            startAgent(hub, """
                    id: helper
                    command: [cat]
                    skills: [translate, summarize]
                    comms: {allow: [outsider]}
                    """);
            // outsider and helper share no group; comms.allow granted each way
            String id = hub.sendOk(outsider, "helper", "ping").text("id");
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(outsider, "/v1/messages/" + id).text("state")));
            List<JsonNode> grants = hub.get(hub.admin(), "/v1/grants").items();
            assertEquals(Set.of("helper->outsider", "outsider->helper"), grants.stream()
                    .map(g -> g.get("from").asText() + "->" + g.get("to").asText()).collect(Collectors.toSet()));
            JsonNode card = hub.get(outsider, "/a2a/helper/.well-known/agent-card.json").json();
            assertEquals(List.of("translate", "summarize"), java.util.stream.StreamSupport.stream(
                    card.get("skills").spliterator(), false).map(sk -> sk.get("id").asText()).toList(), card::toString);
        }
    }

    @Test
    void limitsAreSetOnEachCommandAndOneOverItsCpuTimeIsEnded() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            HubFixture.Resp bounded = hub.post(hub.admin(), "/v1/agents", obj("spec", """
                    id: bounded
                    parent: lead
                    command: [sh, -c, "ulimit -v; ulimit -t; ulimit -n"]
                    limits: {memory: 256M, cpuTime: 7s, openFiles: 100}
                    """));
            assertEquals(201, bounded.status(), bounded::toString);
            assertEquals(268435456L, bounded.get("limits").get("memoryBytes").asLong());
            String id = hub.sendOk(lead, "bounded", "show me").text("id");
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + id).text("state")));
            assertEquals("262144\n7\n100", reply(hub, lead, id).get("text").asText(), "the limits the command ran under");

            startAgent(hub, """
                    id: spinner
                    parent: lead
                    command: [sh, -c, "while :; do :; done"]
                    limits: {cpuTime: 1s}
                    timeout: 5m
                    """);
            String spin = hub.sendOk(lead, "spinner", "spin").text("id");
            await().atMost(WAIT).until(() -> "failed".equals(hub.get(lead, "/v1/messages/" + spin).text("state")));
            assertTrue(hub.get(lead, "/v1/messages/" + spin).get("timeline").toString()
                    .contains("the command exited with status 137"), "past its CPU time the kernel kills it: 128 + 9");

            assertTrue(assertError(hub.post(hub.admin(), "/v1/agents", obj("spec", """
                    id: greedy
                    command: [cat]
                    limits: {memory: lots}
                    """)), 400, "invalid_spec").text("message").contains("limits.memory"));
        }
    }

    /** A stop ends what the command started, also what left it (its own process group, by setsid). */
    @Test
    void aStopEndsWhatTheCommandStartedAlsoWhatLeftIt() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            startAgent(hub, """
                    id: forker
                    parent: lead
                    command: [sh, -c, "(sleep 605 &); exec sleep 606"]
                    """);
            hub.sendOk(lead, "forker", "go");
            await().atMost(WAIT).until(() -> running("sleep 605") && running("sleep 606"));
            assertEquals("stopped", hub.post(lead, "/v1/agents/forker/stop", obj()).text("state"));
            await().atMost(WAIT).until(() -> !running("sleep 605") && !running("sleep 606"));
        }
    }

    /** Whether a process runs whose command line ends so (the JDK shows the program by its full path). */
    private static boolean running(String commandLine) {
        return ProcessHandle.allProcesses().anyMatch(p -> p.info().commandLine().orElse("").endsWith(commandLine));
    }

    @Test
    void anIdleAgentStopsAndTheNextEnvelopeWakesItAgain() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            startAgent(hub, """
                    id: echo
                    parent: lead
                    command: [cat]
                    idleTimeout: 1s
                    """);
            String one = hub.sendOk(lead, "echo", "one").text("id");
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + one).text("state")));
            await().atMost(WAIT).until(() -> hub.get(lead, "/v1/agents/echo/logs").body().contains("idle for 1s"));
            assertEquals("idle", hub.get(lead, "/v1/agents/echo").text("state"));
            String two = hub.sendOk(lead, "echo", "two").text("id");
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + two).text("state")));
            assertEquals("two", reply(hub, lead, two).get("text").asText());
        }
    }

    /**
     * Sends paced (seeded) around a 1 s idle timeout, so that the agent's worker ends and is
     * started again many times, some sends landing just as it ends: every envelope is answered,
     * each exactly once.
     */
    @Test
    void sendsAcrossManyIdleStopsAndWakesAreEachAnsweredOnce() throws Exception {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            startAgent(hub, """
                    id: echo
                    parent: lead
                    command: [cat]
                    idleTimeout: 1s
                    """);
            List<String> sent = Collections.synchronizedList(new ArrayList<>());
            List<Thread> senders = new ArrayList<>();
            for (int s = 0; s < 3; s++) {
                java.util.Random pace = new java.util.Random(42 + s);
                int n = s;
                senders.add(Thread.ofVirtual().start(() -> {
                    for (int i = 0; i < 8; i++) {
                        sent.add(hub.sendOk(lead, "echo", "m " + n + "-" + i).text("id"));
                        try {
                            Thread.sleep(800 + pace.nextInt(600)); // pacing the load around the idle timeout
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        }
                    }
                }));
            }
            for (Thread t : senders) {
                t.join();
            }
            await().atMost(WAIT).until(() -> replies(hub, lead).size() == sent.size());
            Map<String, String> answers = answeredOnce(hub, lead);
            assertEquals(new java.util.TreeSet<>(sent), new java.util.TreeSet<>(answers.keySet()));
            // However the paced sends fell, the worker ends once they stop, and the next send wakes it.
            await().atMost(WAIT).until(() -> hub.get(lead, "/v1/agents/echo/logs?lines=1000").body()
                    .contains("idle for 1s"));
            String last = hub.sendOk(lead, "echo", "last").text("id");
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + last).text("state")));
            assertEquals(sent.size() + 1, replies(hub, lead).size());
        }
    }

    @Test
    void theCommandRunsUnderItsTurnsSpanAsTraceparentSoWhatItSendsJoinsTheTurn() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            startAgent(hub, """
                    id: tracer
                    parent: lead
                    command: [sh, -c, "cat >/dev/null; printf %s \\"$TRACEPARENT\\""]
                    """);
            String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
            HubFixture.Resp sent = hub.request("POST", "/v1/messages", lead, obj("to", "tracer", "text", "where am I?")
                    .toString().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    Map.of("traceparent", "00-" + trace + "-00f067aa0ba902b7-01"));
            assertEquals(202, sent.status(), sent::toString);
            String id = sent.text("id");
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + id).text("state")));
            JsonNode turn = hub.get(lead, "/v1/messages/" + id + "/trace").get("turns").get(0);
            assertEquals("00-" + trace + "-" + turn.get("spanId").asText() + "-01", reply(hub, lead, id).get("text").asText());
        }
    }

    @Test
    void aFailingCommandFailsItsEnvelopeWithTheReasonAndLogsItsStderr() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            startAgent(hub, """
                    id: grumpy
                    parent: lead
                    command: [sh, -c, "echo oops >&2; exit 3"]
                    """);
            String id = hub.sendOk(lead, "grumpy", "please").text("id");
            await().atMost(WAIT).until(() -> "failed".equals(hub.get(lead, "/v1/messages/" + id).text("state")));
            assertTrue(hub.get(lead, "/v1/messages/" + id).get("timeline").toString()
                    .contains("the command exited with status 3"));
            String log = hub.get(lead, "/v1/agents/grumpy/logs").body();
            assertTrue(log.contains("oops") && log.contains("exited with status 3"), log);
            JsonNode failedTurn = hub.get(lead, "/v1/messages/" + id + "/trace").get("turns").get(0); // lead: its parent
            assertEquals("error", failedTurn.at("/events/3/reason").asText(), failedTurn::toString);
            assertTrue(failedTurn.at("/events/2/error").asBoolean(), "the run's result is an error");

            // A program that cannot be started fails the agent: no spinning, nothing woken until a restart.
            startAgent(hub, """
                    id: ghost
                    parent: lead
                    command: [/nonexistent/program]
                    """);
            String lost = hub.sendOk(lead, "ghost", "anyone?").text("id");
            await().atMost(WAIT).until(() -> "failed".equals(hub.get(lead, "/v1/agents/ghost").text("state")));
            assertTrue(hub.get(lead, "/v1/agents/ghost").text("failure").contains("cannot start /nonexistent/program"));
            assertEquals("failed", hub.get(lead, "/v1/messages/" + lost).text("state"));
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=agent.fail").body().contains("cannot start"));
        }
        // The failure outlives the hub: nothing wakes the agent until it is restarted.
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.post(hub.admin(), "/v1/nodes/lead/token", null).text("token");
            assertEquals("failed", hub.get(lead, "/v1/agents/ghost").text("state"));
            String waiting = hub.sendOk(lead, "ghost", "still there?").text("id");
            assertEquals("accepted", hub.get(lead, "/v1/messages/" + waiting).text("state"), "nothing ran it");
            assertEquals(200, hub.post(lead, "/v1/agents/ghost/restart", obj()).status());
            // the restart takes the waiting mail at once (and the program is still missing)
            await().atMost(WAIT).until(() -> "failed".equals(hub.get(lead, "/v1/messages/" + waiting).text("state")));
        }
    }

    @Test
    void anEnvelopeTheHubStoppedUnderIsTakenAgainAfterItsRestart() {
        Path data = tmp.resolve("hub");
        String lead;
        String id;
        try (HubFixture hub = HubFixture.start(data)) {
            lead = hub.createNode("lead", null);
            startAgent(hub, """
                    id: slow
                    parent: lead
                    command: [sh, -c, "if [ -e started ]; then tr a-z A-Z; else touch started; exec sleep 601; fi"]
                    workdir: %s
                    """.formatted(tmp));
            id = hub.sendOk(lead, "slow", "patience").text("id");
            await().atMost(WAIT).until(() -> Files.exists(tmp.resolve("started")));
        } // the hub stops with the command in flight; the envelope is not settled
        assertTrue(ProcessHandle.allProcesses().noneMatch(p -> p.info().commandLine().orElse("").contains("sleep 601")),
                "the hub left no command behind");
        try (HubFixture hub = HubFixture.start(data)) {
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + id).text("state")));
            assertEquals("PATIENCE", reply(hub, lead, id).get("text").asText());
        }
    }

    @Test
    void aStoppedAgentStaysStoppedAcrossAHubRestartUntilRestarted() {
        Path data = tmp.resolve("hub");
        String lead;
        String id;
        try (HubFixture hub = HubFixture.start(data)) {
            lead = hub.createNode("lead", null);
            startAgent(hub, UPPER + "parent: lead\n");
            assertEquals("stopped", hub.post(lead, "/v1/agents/upper/stop", obj()).text("state"));
            id = hub.sendOk(lead, "upper", "wait for me").text("id");
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=agent.stop").body().contains("upper"));
        }
        try (HubFixture hub = HubFixture.start(data)) {
            assertEquals("stopped", hub.get(lead, "/v1/agents/upper").text("state"));
            assertEquals("accepted", hub.get(lead, "/v1/messages/" + id).text("state"), "nothing ran it");
            assertEquals("running", hub.post(lead, "/v1/agents/upper/restart", obj()).text("state"),
                    "woken at once: mail waits for it");
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + id).text("state")));
            assertEquals("WAIT FOR ME", reply(hub, lead, id).get("text").asText());
        }
    }

    @Test
    void badSpecsAreRefusedWithTheFieldAndWhyAndCreateNothing() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            String process = "command: [cat]\nrunner: process\n";
            Map<String, String> refused = Map.ofEntries(
                    Map.entry("id: a1\ncomand: [cat]\n", "unknown field 'comand'"),
                    Map.entry("id: a2\n", "command: required"),
                    Map.entry("id: a3\ncommand: cat\n", "command: a list"),
                    Map.entry("id: a4\ncommand: [cat]\nidleTimeout: soon\n", "idleTimeout: 'soon' is not a duration"),
                    Map.entry("id: a5\ncommand: [cat]\nrunner: thread\n", "runner: one of command, process"),
                    Map.entry("id: a6\ncommand: [cat]\nenv: {1X: y}\n", "env: 1X is not a variable name"),
                    Map.entry("id: a7\ncommand: [cat]\nenv: {KEY: {value: x}}\n",
                            "{file: path} is the only form of a secret"),
                    Map.entry("id: a8\ncommand: [cat]\nwake: sometimes\n", "wake: one of always, on-message"),
                    Map.entry("command: [cat]\n", "id: required"),
                    Map.entry("id: [a9\n", "not YAML"),
                    // restart: a process agent's only; a choice
                    Map.entry("id: a10\ncommand: [cat]\nrestart: never\n",
                            "restart: applies to runner: process only (runner: command starts one process per"
                                    + " envelope)"),
                    Map.entry("id: a11\ncommand: [cat]\nrunner: command\nrestart: always\n",
                            "restart: applies to runner: process only"),
                    Map.entry("id: a12\n" + process + "restart: sometimes\n",
                            "restart: one of always, on-failure, never, not 'sometimes'"),
                    Map.entry("id: a13\n" + process + "restart: [never]\n", "restart: a non-empty string"),
                    // toolBlocklist: at most 64 distinct names of 1 to 100 characters, [A-Za-z0-9_.:*-]
                    Map.entry("id: a14\n" + process + "toolBlocklist: Bash\n", "toolBlocklist: a list"),
                    Map.entry("id: a15\n" + process + "toolBlocklist: [Bash, {name: Read}]\n",
                            "toolBlocklist: each item a string"),
                    Map.entry("id: a16\n" + process + "toolBlocklist: [\"Bash(rm:*)\"]\n",
                            "toolBlocklist: 'Bash(rm:*)' is not a tool name (1 to 100 letters, digits, _ . : - *)"),
                    Map.entry("id: a17\n" + process + "toolBlocklist: [\"\"]\n",
                            "toolBlocklist: '' is not a tool name"),
                    Map.entry("id: a18\n" + process + "toolBlocklist: [" + "x".repeat(101) + "]\n",
                            "is not a tool name"),
                    Map.entry("id: a19\n" + process + "toolBlocklist: [Bash, Read, Bash]\n",
                            "toolBlocklist: 'Bash' is named twice"),
                    // gateway: only this hub's (it is in no federation here)
                    Map.entry("id: a20\ncommand: [cat]\ngateway: b\n", "gateway: this hub is in no federation; start"
                            + " agent a20 on gateway b"),
                    Map.entry("id: a20\n" + process + "toolBlocklist: [" + java.util.stream.IntStream.range(0, 65)
                            .mapToObj(i -> "T" + i).collect(Collectors.joining(", ")) + "]\n",
                            "toolBlocklist: at most 64 tools, not 65"),
                    // toolKinds: at most 256 tool names (as toolBlocklist's) each given a kind
                    Map.entry("id: a21\n" + process + "toolKinds: [Bash]\n",
                            "toolKinds: a mapping Tool: kind (read, edit, execute, …)"),
                    Map.entry("id: a22\n" + process + "toolKinds: {Bash: launch}\n",
                            "toolKinds: Bash: 'launch' is not a tool kind (one of read, edit, delete, move, search,"
                                    + " execute, think, fetch, switch_mode, other)"),
                    Map.entry("id: a23\n" + process + "toolKinds: {Bash: [execute]}\n",
                            "toolKinds: Bash: a kind name"),
                    Map.entry("id: a24\n" + process + "toolKinds: {\"Bash(rm:*)\": execute}\n",
                            "toolKinds: 'Bash(rm:*)' is not a tool name (1 to 100 letters, digits, _ . : - *)"),
                    Map.entry("id: a25\n" + process + "toolKinds: {Bash: Execute}\n",
                            "toolKinds: Bash: 'Execute' is not a tool kind"),
                    Map.entry("id: a26\n" + process + "toolKinds: {" + java.util.stream.IntStream.range(0, 257)
                            .mapToObj(i -> "T" + i + ": read").collect(Collectors.joining(", ")) + "}\n",
                            "toolKinds: at most 256 tools, not 257"));
            refused.forEach((spec, why) -> {
                HubFixture.Resp r = assertError(hub.post(hub.admin(), "/v1/agents", obj("spec", spec)), 400,
                        "invalid_spec");
                assertTrue(r.text("message").contains(why), () -> spec + " -> " + r);
            });
            for (int i = 1; i <= 26; i++) {
                assertEquals(404, hub.get(hub.admin(), "/v1/nodes/a" + i).status(), "nothing created for a" + i);
            }
            assertEquals(0, hub.get(hub.admin(), "/v1/agents").json().get("items").size());
            // at the limits: 64 tools, of 100 characters, every character allowed
            startAgent(hub, "id: blocking\n" + process + "toolBlocklist: [\"mcp__x:y.z-*\", "
                    + java.util.stream.IntStream.range(0, 63).mapToObj(i -> "T%03d".formatted(i).repeat(25))
                    .collect(Collectors.joining(", ")) + "]\n");
            assertTrue(hub.get(hub.admin(), "/v1/agents/blocking/spec").body()
                    .contains("toolBlocklist: [\"mcp__x:y.z-*\", T000T000"), "kept as written");
            startAgent(hub, "id: kinding\n" + process + "toolKinds: {\"mcp__x:y.z-*\": fetch, "
                    + java.util.stream.IntStream.range(0, 255).mapToObj(i -> "T%03d".formatted(i).repeat(25) + ": edit")
                    .collect(Collectors.joining(", ")) + "}\n");
            assertTrue(hub.get(hub.admin(), "/v1/agents/kinding/spec").body()
                    .contains("toolKinds: {\"mcp__x:y.z-*\": fetch, T000T000"), "kept as written");
            // Another node sees neither the agent nor its log.
            startAgent(hub, UPPER + "parent: lead\n");
            String other = hub.createNode("other", null);
            assertError(hub.get(other, "/v1/agents/upper"), 404, "node_not_found");
            assertError(hub.get(other, "/v1/agents/upper/logs"), 404, "node_not_found");
            assertEquals(0, hub.get(other, "/v1/agents").json().get("items").size());
            assertEquals(3, hub.get(hub.admin(), "/v1/agents").json().get("items").size());
            assertTrue(hub.get(lead, "/v1/agents/upper/spec").body().contains("tr a-z A-Z"));
        }
    }

    /** Starts an agent as the admin, which must be answered 201. */
    private static void startAgent(HubFixture hub, String spec) {
        HubFixture.Resp started = hub.post(hub.admin(), "/v1/agents", obj("spec", spec));
        assertEquals(201, started.status(), started::toString);
    }

    /** The replies in {@code token}'s inbox by the envelope each answers, asserting one reply per envelope. */
    private static Map<String, String> answeredOnce(HubFixture hub, String token) {
        Map<String, String> answers = new ConcurrentHashMap<>();
        for (JsonNode reply : replies(hub, token)) {
            assertEquals(null, answers.put(reply.get("corrId").asText(), reply.get("text").asText()),
                    "one reply per envelope");
        }
        return answers;
    }

    private static List<JsonNode> replies(HubFixture hub, String token) {
        return hub.inbox(token).stream().filter(e -> "reply".equals(e.get("kind").asText())).toList();
    }

    private static JsonNode reply(HubFixture hub, String token, String original) {
        return replies(hub, token).stream().filter(e -> original.equals(e.get("corrId").asText())).findFirst()
                .orElseThrow(() -> new AssertionError("no reply to " + original));
    }
}
