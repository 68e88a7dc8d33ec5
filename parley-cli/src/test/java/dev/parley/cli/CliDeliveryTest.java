package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.cli.CliRun.Envelope;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.parley.cli.CliRun.addNode;
import static dev.parley.cli.CliRun.as;
import static dev.parley.cli.CliRun.assertFailure;
import static dev.parley.cli.CliRun.envelopes;
import static dev.parley.cli.CliRun.parley;
import static dev.parley.nats.testing.ServerProcess.freePort;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The delivery-semantics commands against a real hub, in-process (see {@link CliRun}):
 * ask and its dedicated exit status, reply deadlines, webhook delivery and dead letters,
 * topics, broadcasts and tasks.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CliDeliveryTest {
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String SECRET = "0123456789abcdef-secret";

    @TempDir
    Path data;

    private Hub hub;
    private String admin;
    private String lead;
    private String worker;
    private final ExecutorService background = Executors.newCachedThreadPool();

    @BeforeEach
    void startHub() {
        hub = Hub.start(HubConfig.defaults(data.resolve("hub")).withPort(0));
        admin = hub.adminToken();
        lead = addNode(hub, "lead");
        worker = addNode(hub, "worker-1", "--parent", "lead", "--label", "role=coder");
    }

    @AfterEach
    void stopEverything() throws InterruptedException {
        background.shutdownNow(); // interrupts any tail or ask still waiting
        background.awaitTermination(10, TimeUnit.SECONDS);
        hub.close();
    }

    @Test
    void anAgentStartedFromItsSpecFileAnswersAnAskAndIsListedLoggedAndStopped() throws Exception {
        Path spec = data.resolve("upper.yaml");
        java.nio.file.Files.writeString(spec, """
                id: upper
                parent: lead
                runner: command
                command: [sh, -c, "tr a-z A-Z"]
                wake: on-message
                idleTimeout: 20s
                """);
        assertFailure(parley(as(hub, lead, "agent", "start", "--spec", spec.toString())), 5, "forbidden");
        CliRun started = parley(as(hub, admin, "agent", "start", "--spec", spec.toString()));
        assertEquals(0, started.exit, started::describe);
        assertTrue(started.out().contains("upper") && started.out().contains("on-message"), started::describe);

        CliRun ask = parley(as(hub, lead, "ask", "--to", "upper", "--timeout", "30s", "make", "me", "loud"));
        assertEquals("MAKE ME LOUD\n", ask.out().replace("\r\n", "\n"), ask::describe);

        JsonNode listed = parley(as(hub, lead, "agent", "list", "--json")).json();
        assertEquals("upper", listed.at("/items/0/id").asText(), listed::toString);
        assertEquals("on-message", listed.at("/items/0/wake").asText(), listed::toString);
        assertTrue(parley(as(hub, lead, "agent", "spec", "upper")).out().contains("tr a-z A-Z"));
        CliRun stopped = parley(as(hub, lead, "agent", "stop", "upper"));
        assertTrue(stopped.out().contains("stopped"), stopped::describe);
        assertTrue(parley(as(hub, lead, "agent", "logs", "upper")).exit == 0);

        java.nio.file.Files.writeString(spec, "id: typo\ncomand: [cat]\n");
        assertFailure(parley(as(hub, admin, "agent", "start", "--spec", spec.toString())), 1, "invalid_spec");
        assertFailure(parley(as(hub, admin, "agent", "start", "--spec", data.resolve("missing.yaml").toString())), 1,
                "invalid_spec");
    }

    /**
     * {@code parley agent run}, the protocol's reference runner, as a {@code runner: process}
     * agent: the hub starts it (this JVM's java and classpath) with the agent's URL and token;
     * it claims each envelope, heartbeats while its command runs (which does not get the token),
     * and replies.
     */
    @Test
    void aProcessAgentRunningParleyAgentRunClaimsAndAnswers() throws Exception {
        String javaBin = ProcessHandle.current().info().command().orElseThrow();
        Path spec = data.resolve("loud.yaml");
        java.nio.file.Files.writeString(spec, """
                id: loud
                parent: lead
                runner: process
                command: ["%s", -cp, "%s", dev.parley.cli.Main, agent, run, --heartbeat, 1s, --,
                          sh, -c, 'tr a-z A-Z; test -z "$PARLEY_TOKEN" || echo token leaked']
                """.formatted(javaBin, System.getProperty("java.class.path")));
        CliRun started = parley(as(hub, admin, "agent", "start", "--spec", spec.toString()));
        assertEquals(0, started.exit, started::describe);
        JsonNode ask = parley(as(hub, lead, "ask", "--to", "loud", "--timeout", "60s", "--json", "claim", "me")).json();
        assertEquals("CLAIM ME", ask.at("/reply/text").asText(), ask::toString);
        String asked = parley(as(hub, lead, "status", ask.at("/request/id").asText(), "--json")).json().toString();
        assertTrue(asked.contains("claimed by loud") && asked.contains("\"replied\""), asked);

        CliRun refused = parley(as(hub, lead, "agent", "run", "--timeout", "25h", "cat"));
        assertEquals(2, refused.exit, refused::describe);
        assertTrue(refused.err().contains("--timeout is at most 24h"), refused::describe);
    }

    /** {@code parley agent claude} works worker-1's inbox with a stand-in Claude Code playing a recorded session. */
    @Test
    void theClaudeCodeRunnerAnswersAnAskWithTheSessionsResult() throws Exception {
        Path standIn = ClaudeCodeTurnTest.standIn(java.nio.file.Files.createDirectory(data.resolve("claude")),
                "cat '" + ClaudeCodeTurnTest.fixture("success.jsonl") + "'");
        CliRun runner = new CliRun();
        background.submit(() -> runner.execute(as(hub, worker, "agent", "claude", "--claude-bin", standIn.toString())));
        JsonNode ask = parley(as(hub, lead, "ask", "--to", "worker-1", "--timeout", "60s", "--json", "run the tests"))
                .json();
        assertEquals("All 42 tests pass.", ask.at("/reply/text").asText(), () -> ask + "\n" + runner.describe());
        String status = parley(as(hub, lead, "status", ask.at("/request/id").asText(), "--json")).json().toString();
        assertTrue(status.contains("claimed by worker-1"), status);

        // The turn's trace reached the hub before the reply; worker-1's parent reads it by the request.
        String id = ask.at("/request/id").asText();
        JsonNode trace = trace(lead, id);
        JsonNode turn = trace.at("/turns/0");
        assertEquals(List.of(id + ".1", "worker-1", id, "claude-code"), List.of(turn.path("turn").asText(),
                turn.path("node").asText(), turn.path("envelope").asText(), turn.path("adapter").asText()), trace::toString);
        assertEquals(List.of("message", "message", "tool_call", "tool_result", "tool_call", "tool_result", "message",
                "usage", "stop"), types(turn), trace::toString);
        assertEquals("A message from lead (kind message, envelope " + id + "):\n\nrun the tests",
                turn.at("/events/0/text").asText(), trace::toString);
        assertEquals("Bash", turn.at("/events/2/tool").asText());
        assertEquals("execute", turn.at("/events/2/kind").asText());
        assertEquals(turn.at("/events/2/id"), turn.at("/events/3/parentId"), "the result under its call");
        assertEquals(0.01874, turn.at("/events/7/costUsd").asDouble());
        assertEquals(1, trace.path("turns").size(), trace::toString);
    }

    /**
     * {@code parley agent echo} and {@code parley agent run} answer asks, and each turn's trace is
     * at the hub, in the trace of the request (its node's parent reads it; a stranger does not).
     */
    @Test
    void theEchoAndCommandRunnersTraceEachTurnAtTheHub() throws Exception {
        CliRun echo = new CliRun();
        background.submit(() -> echo.execute(as(hub, worker, "agent", "echo")));
        JsonNode ask = parley(as(hub, lead, "ask", "--to", "worker-1", "--timeout", "60s", "--json", "ping")).json();
        assertEquals("ping", ask.at("/reply/text").asText(), () -> ask + "\n" + echo.describe());
        String id = ask.at("/request/id").asText();
        JsonNode turn = trace(lead, id).at("/turns/0");
        assertEquals(List.of(id + ".1", "echo"), List.of(turn.path("turn").asText(), turn.path("adapter").asText()));
        assertEquals(List.of("message", "message", "stop"), types(turn), turn::toString);
        assertEquals("ping", turn.at("/events/1/text").asText());

        String other = addNode(hub, "worker-2", "--parent", "lead");
        CliRun command = new CliRun();
        background.submit(() -> command.execute(as(hub, other, "agent", "run", "tr", "a-z", "A-Z")));
        JsonNode shout = parley(as(hub, lead, "ask", "--to", "worker-2", "--timeout", "60s", "--json", "hello")).json();
        assertEquals("HELLO", shout.at("/reply/text").asText(), () -> shout + "\n" + command.describe());
        JsonNode commandTurn = trace(lead, shout.at("/request/id").asText()).at("/turns/0");
        assertEquals("command", commandTurn.path("adapter").asText(), commandTurn::toString);
        assertEquals(List.of("message", "tool_call", "tool_result", "message", "stop"), types(commandTurn));
        assertEquals("[\"tr\",\"a-z\",\"A-Z\"]", commandTurn.at("/events/1/input/argv").toString());
        assertEquals("exit status 0\nHELLO", commandTurn.at("/events/2/output").asText());
        assertEquals("end_turn", commandTurn.at("/events/4/reason").asText());

        // worker-1 is not worker-2's parent: to it, the request and its trace do not exist
        HubException hidden = org.junit.jupiter.api.Assertions.assertThrows(HubException.class,
                () -> trace(worker, shout.at("/request/id").asText()));
        assertEquals("message_not_found", hidden.code());
    }

    private JsonNode trace(String token, String messageId) throws InterruptedException {
        try (HubClient client = new HubClient(java.net.URI.create(hub.url()), token)) {
            return client.get("/v1/messages/" + messageId + "/trace");
        }
    }

    private static List<String> types(JsonNode turn) {
        List<String> types = new java.util.ArrayList<>();
        turn.path("events").forEach(e -> types.add(e.path("type").asText()));
        return types;
    }

    /**
     * {@code parley agent claude} as a {@code runner: process} agent: the hub gives it the spec's
     * toolBlocklist as PARLEY_TOOL_BLOCKLIST, and the stand-in Claude Code is called with those
     * tools disallowed too, beside the defaults and --disallow-tool, each once.
     */
    @Test
    void aClaudeCodeAgentDisallowsTheToolsOfItsSpecsBlocklist() throws Exception {
        Path dir = java.nio.file.Files.createDirectory(data.resolve("claude"));
        Path standIn = ClaudeCodeTurnTest.standIn(dir, "cat '" + ClaudeCodeTurnTest.fixture("success.jsonl") + "'");
        Path spec = data.resolve("coder.yaml");
        java.nio.file.Files.writeString(spec, """
                id: coder
                parent: lead
                runner: process
                command: ["%s", -cp, "%s", dev.parley.cli.Main, agent, claude, --claude-bin, "%s",
                          --disallow-tool, WebFetch]
                toolBlocklist: [Bash, WebFetch, "mcp__github__*"]
                """.formatted(ProcessHandle.current().info().command().orElseThrow(),
                System.getProperty("java.class.path"), standIn));
        CliRun started = parley(as(hub, admin, "agent", "start", "--spec", spec.toString()));
        assertEquals(0, started.exit, started::describe);
        JsonNode ask = parley(as(hub, lead, "ask", "--to", "coder", "--timeout", "60s", "--json", "run the tests"))
                .json();
        assertEquals("All 42 tests pass.", ask.at("/reply/text").asText(), ask::toString);
        List<String> args = java.nio.file.Files.readAllLines(dir.resolve("args"));
        assertEquals("AskUserQuestion,EnterPlanMode,ExitPlanMode,EnterWorktree,ExitWorktree,WebFetch,Bash,"
                + "mcp__github__*", args.get(args.indexOf("--disallowedTools") + 1), args::toString);
    }

    @Test
    void askPrintsTheReplyOnStdout() throws Exception {
        CliRun ask = new CliRun();
        Future<Integer> asking = background.submit(() -> ask.execute(as(hub, lead, "ask", "--to", "worker-1",
                "--timeout", "30s", "what", "is", "2+2?")));

        JsonNode question = parley(as(hub, worker, "tail", "--count", "1", "--json")).json();
        assertEquals("what is 2+2?", question.path("text").asText(), question::toString);
        CliRun replied = parley(as(hub, worker, "reply", question.path("id").asText(), "4"));
        assertEquals(0, replied.exit, replied::describe);

        assertEquals(0, asking.get(PATIENCE.toSeconds(), TimeUnit.SECONDS), ask::describe);
        assertEquals("4\n", ask.out().replace("\r\n", "\n"), ask::describe);
        assertEquals("", ask.err(), ask::describe);

        // Data answers are printed as JSON; --json prints the hub's {"request","reply"}.
        CliRun askJson = new CliRun();
        Future<Integer> askingJson = background.submit(() -> askJson.execute(as(hub, lead, "ask", "--to", "worker-1",
                "--kind", "question", "--data", "{\"q\":\"sum\",\"of\":[2,2]}", "--json")));
        // Resume after what was read: the stream the last tail left may still be open on the hub's
        // side, and an envelope written into it counts as delivered (so a cursorless tail skips it).
        JsonNode second = parley(as(hub, worker, "tail", "--count", "1", "--json",
                "--after", question.path("seq").asText())).json();
        assertEquals("question", second.path("kind").asText(), second::toString);
        assertEquals(0, parley(as(hub, worker, "reply", second.path("id").asText(), "--data", "{\"sum\":4}")).exit);
        assertEquals(0, askingJson.get(PATIENCE.toSeconds(), TimeUnit.SECONDS), askJson::describe);
        JsonNode answer = askJson.json();
        assertEquals(second.path("id").asText(), answer.path("request").path("id").asText(), answer::toString);
        assertEquals(4, answer.path("reply").path("data").path("sum").asInt(), answer::toString);
        assertEquals(second.path("id").asText(), answer.path("reply").path("corrId").asText(), answer::toString);

        CliRun askData = new CliRun();
        Future<Integer> askingData = background.submit(() -> askData.execute(as(hub, lead, "ask", "--to",
                "worker-1", "sum?")));
        JsonNode third = parley(as(hub, worker, "tail", "--count", "1", "--json",
                "--after", second.path("seq").asText())).json();
        assertEquals(0, parley(as(hub, worker, "reply", third.path("id").asText(), "--data", "{\"sum\":4}")).exit);
        assertEquals(0, askingData.get(PATIENCE.toSeconds(), TimeUnit.SECONDS), askData::describe);
        assertEquals("{\"sum\":4}", askData.out().strip(), askData::describe);
    }

    @Test
    void askWithoutAReplyInTimeExitsNine() {
        CliRun ask = parley(as(hub, lead, "ask", "--to", "worker-1", "--timeout", "300ms", "anyone?"));

        assertFailure(ask, ExitStatus.NO_REPLY, "reply_timeout");
        assertEquals(9, ExitStatus.NO_REPLY);
        Matcher request = Pattern.compile("\\(request (\\S+)\\)").matcher(ask.err());
        assertTrue(request.find(), ask::describe);
        JsonNode status = parley(as(hub, lead, "status", request.group(1), "--json")).json();
        assertEquals("accepted", status.path("state").asText(), "the request stays accepted: " + status);

        assertEquals(ExitStatus.USAGE, parley(as(hub, lead, "ask", "--to", "worker-1", "--timeout", "6m", "x")).exit);
        assertEquals(ExitStatus.USAGE, parley(as(hub, lead, "ask", "--to", "worker-1")).exit);
        assertTrue(parley("--help").out().contains("9    no reply in time (ask)"));
    }

    /** {@code parley --version} builds no subcommand (half of its start-up was building them all) and still answers. */
    @Test
    void theVersionAloneBuildsNoSubcommand() {
        for (String option : List.of("--version", "-V")) {
            assertTrue(ParleyCommand.forArgs(option).getSubcommands().isEmpty(), option);
            CliRun version = parley(option);
            assertEquals(0, version.exit, version::describe);
            assertTrue(version.out().startsWith("parley "), version::describe);
        }
        assertTrue(ParleyCommand.forArgs("--version", "--help").getSubcommands().containsKey("send"),
                "with more than the version every subcommand is there, to be listed");
    }

    @Test
    void aMissedReplyDeadlineShowsAsAnIncident() {
        JsonNode receipt = parley(as(hub, lead, "send", "--to", "worker-1", "--reply-within", "200ms", "quick!",
                "--json")).json();
        String id = receipt.path("id").asText();

        JsonNode incident = parley(as(hub, lead, "tail", "--count", "1", "--json")).json();
        assertEquals("incident", incident.path("kind").asText(), incident::toString);
        assertEquals(id, incident.path("corrId").asText(), incident::toString);
        CliRun status = parley(as(hub, lead, "status", id));
        assertEquals(0, status.exit, status::describe);
        assertTrue(Pattern.compile("(?m)^state\\s+incident$").matcher(status.out()).find(), status::describe);
        assertTrue(status.out().contains("no reply or processed ack within 200 ms"), status::describe);
    }

    @Test
    void deadLettersAreListedShownRedrivenAndDropped() throws IOException {
        String hook = "http://127.0.0.1:" + freePort() + "/hook"; // nothing listens: every push fails
        CliRun set = parley(as(hub, admin, "delivery", "set", "worker-1", "--webhook", hook, "--secret", SECRET,
                "--max-attempts", "2", "--base", "1ms", "--cap", "1ms"));
        assertEquals(0, set.exit, set::describe);
        assertTrue(Pattern.compile("(?m)^webhook\\s+" + Pattern.quote(hook) + "\\s").matcher(set.out()).find(),
                set::describe);
        assertTrue(set.out().contains("maxAttempts=2  baseMs=1  capMs=1"), set::describe);
        assertFalse(set.out().contains(SECRET), "the secret is never shown back");
        JsonNode shown = parley(as(hub, worker, "delivery", "show", "worker-1", "--json")).json();
        assertEquals(hook, shown.path("webhook").path("url").asText(), shown::toString);
        assertEquals(2, shown.path("retry").path("maxAttempts").asInt(), shown::toString);
        assertFalse(shown.toString().contains(SECRET), shown::toString);
        assertEquals(ExitStatus.USAGE, parley(as(hub, admin, "delivery", "set", "worker-1", "--webhook", hook)).exit,
                "a webhook needs its secret");

        String id = parley(as(hub, lead, "send", "--to", "worker-1", "lost", "in", "transit", "--json")).json()
                .path("id").asText();
        await().atMost(PATIENCE).until(() -> deadLetterIds().contains(id));

        CliRun status = parley(as(hub, lead, "status", id));
        assertTrue(status.out().contains("attempt 1 failed: "), status::describe);
        assertTrue(Pattern.compile("next attempt in \\d+ ms").matcher(status.out()).find(), status::describe);
        assertTrue(Pattern.compile("(?m)^state\\s+dead_lettered$").matcher(status.out()).find(), status::describe);
        JsonNode notice = parley(as(hub, lead, "tail", "--count", "1", "--json")).json();
        assertEquals("dead_letter", notice.path("kind").asText(), notice::toString);
        assertEquals(id, notice.path("corrId").asText(), notice::toString);

        CliRun list = parley(as(hub, admin, "dlq", "list", "--node", "worker-1", "--limit", "10"));
        assertEquals(0, list.exit, list::describe);
        assertTrue(list.out().startsWith("ID "), list::describe);
        assertTrue(Pattern.compile("(?m)^" + id + "\\s+worker-1\\s+2\\s").matcher(list.out()).find(), list::describe);
        CliRun show = parley(as(hub, admin, "dlq", "show", id));
        assertEquals(0, show.exit, show::describe);
        assertTrue(Pattern.compile("(?m)^content\\s+lost in transit$").matcher(show.out()).find(), show::describe);
        assertTrue(Pattern.compile("(?m)^attempts\\s+2$").matcher(show.out()).find(), show::describe);
        assertEquals(id, parley(as(hub, admin, "dlq", "show", id, "--json")).json().path("envelope").path("id")
                .asText());
        assertFailure(parley(as(hub, lead, "dlq", "list")), ExitStatus.FORBIDDEN, "forbidden");

        // A redrive is a fresh cycle under the same id; with nothing listening it ends in the queue again.
        JsonNode redriven = parley(as(hub, admin, "dlq", "redrive", id, "--json")).json();
        assertEquals(id, redriven.path("id").asText(), redriven::toString);
        assertEquals("accepted", redriven.path("state").asText(), redriven::toString);
        await().atMost(PATIENCE).until(() -> parley(as(hub, lead, "status", id, "--json")).json().path("timeline")
                .findValuesAsText("state").stream().filter("dead_lettered"::equals).count() == 2);

        CliRun dropped = parley(as(hub, admin, "dlq", "drop", id));
        assertEquals("dropped  dead-letter=" + id, dropped.out().strip(), dropped::describe);
        assertFailure(parley(as(hub, admin, "dlq", "show", id)), ExitStatus.NOT_FOUND, "dead_letter_not_found");
        assertFalse(deadLetterIds().contains(id));
    }

    @Test
    void topicEventsReachSubscribers() {
        CliRun subscribed = parley(as(hub, worker, "topic", "subscribe", "builds"));
        assertEquals(0, subscribed.exit, subscribed::describe);
        assertTrue(subscribed.out().startsWith("subscribed  topic=builds  node=worker-1"), subscribed::describe);
        CliRun subscribers = parley(as(hub, admin, "topic", "subscribers", "builds"));
        assertTrue(Pattern.compile("(?m)^worker-1\\s+\\S+$").matcher(subscribers.out()).find(), subscribers::describe);

        CliRun published = parley(as(hub, lead, "topic", "publish", "builds", "main", "is", "green"));
        assertEquals(0, published.exit, published::describe);
        assertTrue(published.out().strip().matches("published  id=\\S+  topic=builds  delivered=1"),
                published::describe);

        CliRun tail = parley(as(hub, worker, "tail", "--count", "1"));
        assertEquals(0, tail.exit, tail::describe);
        List<Envelope> seen = envelopes(tail);
        assertEquals(1, seen.size(), tail::describe);
        assertEquals("lead", seen.getFirst().from());
        assertEquals("event", seen.getFirst().kind());
        assertEquals("main is green", seen.getFirst().text());

        JsonNode left = parley(as(hub, worker, "topic", "unsubscribe", "builds", "--json")).json();
        assertTrue(left.path("unsubscribed").asBoolean(), left::toString);
        JsonNode unheard = parley(as(hub, lead, "topic", "publish", "builds", "--data", "{\"ok\":true}", "--json"))
                .json();
        assertEquals(0, unheard.path("delivered").asInt(), unheard::toString);
        assertEquals(ExitStatus.REFUSED, parley(as(hub, worker, "topic", "subscribe", "Not A Topic")).exit);
    }

    @Test
    void broadcastsReachTheFilteredGroup() {
        addNode(hub, "worker-2", "--parent", "lead", "--label", "role=tester");

        CliRun sent = parley(as(hub, admin, "broadcast", "--group", "lead", "--label", "role=coder", "deploy", "freeze"));
        assertEquals(0, sent.exit, sent::describe);
        assertTrue(sent.out().strip().matches("broadcast  id=\\S+  delivered=1"), sent::describe);
        List<Envelope> seen = envelopes(parley(as(hub, worker, "tail", "--count", "1")));
        assertEquals("broadcast", seen.getFirst().kind());
        assertEquals("deploy freeze", seen.getFirst().text());

        JsonNode toGroup = parley(as(hub, lead, "broadcast", "--kind", "external", "--data", "{\"all\":true}",
                "--json")).json();
        assertEquals(2, toGroup.path("delivered").asInt(), "the lead's children, not itself: " + toGroup);
        assertFailure(parley(as(hub, worker, "broadcast", "--group", "worker-2", "hi")), ExitStatus.FORBIDDEN,
                "forbidden");
    }

    @Test
    void aTaskGoesFromCreateToCompleteThroughTheCli() {
        JsonNode created = parley(as(hub, lead, "task", "create", "--to", "worker-1", "--title", "run the tests",
                "--input", "{\"suite\":\"unit\"}", "--json")).json();
        String id = created.path("id").asText();
        assertEquals("submitted", created.path("state").asText(), created::toString);
        assertEquals("worker-1", created.path("assignee").asText(), created::toString);

        JsonNode accepted = parley(as(hub, worker, "task", "accept", id, "--eta", "10m", "--json")).json();
        assertEquals("accepted", accepted.path("state").asText(), accepted::toString);
        assertEquals(600, accepted.path("etaSeconds").asInt(), accepted::toString);
        CliRun updated = parley(as(hub, worker, "task", "update", id, "--progress", "{\"percent\":50}"));
        assertEquals("updated  id=" + id + "  state=working  assignee=worker-1", updated.out().strip(),
                updated::describe);
        JsonNode completed = parley(as(hub, worker, "task", "complete", id, "--result", "{\"passed\":12}",
                "--artifact", "https://ci.example/report?run=7=text/html", "--artifact", "file:///tmp/log.txt",
                "--json")).json();
        assertEquals("completed", completed.path("state").asText(), completed::toString);
        assertEquals(12, completed.path("result").path("passed").asInt(), completed::toString);
        assertEquals("https://ci.example/report?run=7", completed.path("artifacts").path(0).path("uri").asText());
        assertEquals("text/html", completed.path("artifacts").path(0).path("mediaType").asText());
        assertEquals("file:///tmp/log.txt", completed.path("artifacts").path(1).path("uri").asText());

        CliRun shown = parley(as(hub, lead, "task", "show", id));
        assertEquals(0, shown.exit, shown::describe);
        assertTrue(Pattern.compile("(?m)^state\\s+completed$").matcher(shown.out()).find(), shown::describe);
        assertTrue(Pattern.compile("(?m)^result\\s+\\{\"passed\":12}$").matcher(shown.out()).find(), shown::describe);
        assertTrue(parley(as(hub, lead, "task", "list", "--assignee", "worker-1", "--state", "completed", "--json"))
                .json().path("items").findValuesAsText("id").contains(id));
        assertFailure(parley(as(hub, worker, "task", "accept", id)), ExitStatus.CONFLICT, "invalid_transition");

        List<String> kinds = parley(as(hub, lead, "tail", "--count", "3", "--json")).jsonLines().stream()
                .map(e -> e.path("kind").asText()).toList();
        assertEquals(List.of("task_accept", "task_update", "task_complete"), kinds);
    }

    @Test
    void aSpawnedAssigneeGetsItsTokenOnceAndEphemeralTasksRemoveIt() {
        CliRun created = parley(as(hub, lead, "task", "create", "--spawn", "helper", "--spawn-kind", "managed",
                "--spawn-label", "role=temp", "--ephemeral", "--title", "summarize"));
        assertEquals(0, created.exit, created::describe);
        Matcher summary = Pattern.compile("^created  id=(\\S+)  state=submitted  assignee=helper$", Pattern.MULTILINE)
                .matcher(created.out());
        assertTrue(summary.find(), created::describe);
        Matcher token = Pattern.compile("(?m)^token\\s+(pn_\\S+)$").matcher(created.out());
        assertTrue(token.find(), created::describe);
        String id = summary.group(1);

        JsonNode child = parley(as(hub, admin, "node", "show", "helper", "--json")).json();
        assertEquals("lead", child.path("parent").asText(), child::toString);
        assertEquals("managed", child.path("kind").asText(), child::toString);
        CliRun failed = parley(as(hub, token.group(1), "task", "fail", id, "--reason", "no time"));
        assertEquals("failed  id=" + id + "  state=failed  assignee=helper", failed.out().strip(), failed::describe);
        assertFailure(parley(as(hub, admin, "node", "show", "helper")), ExitStatus.NOT_FOUND, "node_not_found");
        assertEquals(ExitStatus.USAGE, parley(as(hub, lead, "task", "fail", id)).exit, "fail needs --reason");
        assertEquals(ExitStatus.USAGE, parley(as(hub, lead, "task", "create", "--title", "t")).exit,
                "an assignee is required");
        assertEquals(ExitStatus.USAGE, parley(as(hub, lead, "task", "create", "--to", "worker-1", "--spawn", "x",
                "--title", "t")).exit, "--to and --spawn exclude each other");

        String other = parley(as(hub, lead, "task", "create", "--to", "worker-1", "--title", "later", "--json")).json()
                .path("id").asText();
        JsonNode canceled = parley(as(hub, lead, "task", "cancel", other, "--reason", "not needed", "--json")).json();
        assertEquals("canceled", canceled.path("state").asText(), canceled::toString);
        assertEquals("not needed", canceled.path("reason").asText(), canceled::toString);
    }

    @Test
    void aTaskSpawnedFromATemplateIsRunByTheHubAndItsResultShown() throws Exception {
        Path spec = data.resolve("rev.yaml");
        java.nio.file.Files.writeString(spec, """
                id: rev
                parent: lead
                command: [rev]
                """);
        assertEquals(0, parley(as(hub, admin, "agent", "start", "--spec", spec.toString())).exit);
        CliRun created = parley(as(hub, lead, "task", "create", "--spawn", "rev-1", "--template", "rev",
                "--capability", "worker-1", "--title", "mirror", "--input", "\"stressed\"", "--json"));
        assertEquals(0, created.exit, created::describe);
        String id = created.json().path("id").asText();
        assertTrue(created.json().path("assigneeToken").isMissingNode(), created::describe);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> parley(as(hub, lead,
                "task", "show", id, "--json")).json().path("state").asText().equals("completed"));
        assertEquals("desserts", parley(as(hub, lead, "task", "show", id, "--json")).json().at("/result/text").asText());
        assertFailure(parley(as(hub, admin, "node", "show", "rev-1")), ExitStatus.NOT_FOUND, "node_not_found");
    }

    @Test
    void aCapabilityIsPublishedListedRoutedReviewedAndUnpublishedFromTheCli() throws Exception {
        Path contract = data.resolve("contract.json");
        java.nio.file.Files.writeString(contract, "{\"type\": \"object\", \"required\": [\"passed\"]}");
        CliRun published = parley(as(hub, lead, "capability", "publish", "cap.tests", "--owner", "worker-1",
                "--delegation-skill", "skills/ask-for-tests@1", "--executor-skill", "skills/run-tests@3.2",
                "--contract", contract.toString(), "--eta", "10m"));
        assertEquals(0, published.exit, published::describe);
        assertTrue(published.out().startsWith("published  id=cap.tests  owner=worker-1"), published::describe);
        CliRun listed = parley(as(hub, worker, "capability", "list"));
        assertTrue(Pattern.compile("(?m)^cap\\.tests\\s+worker-1\\s+skills/ask-for-tests@1\\s+skills/run-tests@3\\.2\\s+600$")
                .matcher(listed.out()).find(), listed::describe);

        String id = parley(as(hub, lead, "task", "create", "--to", "cap.tests", "--title", "run them", "--json")).json()
                .path("id").asText();
        assertEquals(0, parley(as(hub, worker, "task", "accept", id)).exit);
        assertEquals(0, parley(as(hub, worker, "task", "complete", id, "--result", "{\"failed\": 3}")).exit);
        CliRun reviews = parley(as(hub, lead, "capability", "reviews", "cap.tests"));
        assertTrue(reviews.out().contains("contract_violation") && reviews.out().contains(id), reviews::describe);

        assertEquals(0, parley(as(hub, worker, "capability", "unpublish", "cap.tests")).exit);
        assertFailure(parley(as(hub, lead, "task", "create", "--to", "cap.tests", "--title", "again")), ExitStatus.NOT_FOUND,
                "capability_not_found");
        assertEquals(ExitStatus.USAGE, parley(as(hub, lead, "capability", "publish", "cap.x", "--owner", "worker-1",
                "--delegation-skill", "no-version", "--executor-skill", "a@1")).exit);
    }

    private List<String> deadLetterIds() {
        return parley(as(hub, admin, "dlq", "list", "--json")).json().path("items").findValuesAsText("id");
    }
}
