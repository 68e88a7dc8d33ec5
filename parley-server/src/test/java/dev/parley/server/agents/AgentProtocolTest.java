package dev.parley.server.agents;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.Claims;
import dev.parley.core.Sweep;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.SseClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The agent protocol on a real hub: claim, heartbeat and ack over HTTP, the sweep taking back
 * claims of silent claimants (with the hub's clock moved on by the test, never slept through),
 * and {@code runner: process} agents, one the example shell agent, one stuck on purpose with
 * SIGSTOP and killed by the sweep, one crashing in a loop.
 */
class AgentProtocolTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** The example agent in shell, as shipped. */
    private static final Path SHELL_AGENT = Path.of("..", "examples", "agents", "shell-agent.sh").toAbsolutePath()
            .normalize();

    @TempDir
    Path tmp;

    /**
     * The hub's clock: it stands still unless the test moves it, so what depends on time (a
     * claim's age, a backoff, when a taken-back claim is delivered again) happens when the test
     * says, however slow the machine.
     */
    private final AtomicLong ahead = new AtomicLong();
    private final Instant base = Instant.ofEpochMilli(System.currentTimeMillis());
    private final InstantSource clock = () -> base.plusMillis(ahead.get());

    private HubFixture start() {
        // the test sweeps when it has moved the clock on; the hub's own sweeps come only at its start
        return HubFixture.start(tmp.resolve("hub"), config -> config.withSweepInterval(Duration.ofDays(1)),
                System::nanoTime, clock);
    }

    private void moveOn(Duration by) {
        ahead.addAndGet(by.toMillis());
    }

    @Test
    void theReceiverClaimsHeartbeatsAndAcksAndNoOneElseMay() {
        try (HubFixture hub = start()) {
            Sent sent = sent(hub);
            String lead = sent.lead(), worker = sent.worker(), id = sent.id(), at = "/v1/messages/" + id;

            assertError(hub.post(worker, at + "/heartbeat", obj()), 409, "not_claimed");
            assertError(hub.post(lead, at + "/claim", obj()), 403, "forbidden");
            assertError(hub.post(worker, at + "/claim", obj("timeoutMs", 0)), 400, "invalid_request");
            assertError(hub.post(worker, at + "/claim", obj("timeoutMs", 86_400_001L)), 400, "invalid_request");
            HubFixture.Resp claimed = hub.post(worker, at + "/claim", obj("timeoutMs", 120_000));
            assertEquals(200, claimed.status(), claimed::toString);
            assertEquals(List.of("processing", "worker", "0", "120000"), List.of(claimed.text("state"),
                    claimed.text("claimant"), claimed.text("tries"), claimed.text("timeoutMs")), claimed::toString);
            assertEquals("processing", hub.get(lead, at).text("state"), "the sender sees it worked on");
            assertEquals("worker", hub.get(lead, at).json().at("/claim/claimant").asText());

            HubFixture.Resp beat = hub.post(worker, at + "/heartbeat",
                    obj("tool", "bash", "toolStartedAt", "2026-11-24T10:00:00Z", "toolTimeoutMs", 3_600_000));
            assertEquals(200, beat.status(), beat::toString);
            assertEquals("bash", beat.get("heartbeat").get("tool").asText());
            assertEquals(3_600_000, beat.get("timeoutMs").asLong());
            assertError(hub.post(worker, at + "/heartbeat", obj("tool", "x".repeat(201))), 400, "invalid_request");
            assertError(hub.post(worker, at + "/heartbeat", obj("toolStartedAt", "+300000000-01-01T00:00:00Z")), 400,
                    "invalid_request");
            assertError(hub.post(lead, at + "/heartbeat", obj()), 403, "forbidden");
            assertEquals(200, hub.post(worker, at + "/claim", obj()).status(), "claiming again keeps the claim");
            assertEquals(new Claims.Swept(1, 0, 0, 0), hub.hub().sweep(), "a fresh claim stands");

            assertError(hub.post(lead, at + "/ack", obj("status", "processed")), 403, "forbidden");
            assertEquals("processed", hub.post(worker, at + "/ack", obj("status", "processed")).text("state"));
            assertError(hub.post(worker, at + "/claim", obj()), 409, "invalid_transition");
            assertError(hub.post(worker, at + "/heartbeat", obj()), 409, "not_claimed");
            assertEquals(new Claims.Swept(0, 0, 0, 0), hub.hub().sweep(), "a settled envelope has no claim");
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=claim").body().contains(id));
        }
    }

    @Test
    void theSweepTakesASilentClaimBackWithBackoffRedeliversItAndGivesUpAfterFiveTries() {
        try (HubFixture hub = start()) {
            Sent sent = sent(hub);
            String lead = sent.lead(), worker = sent.worker(), id = sent.id(), at = "/v1/messages/" + id;
            try (SseClient live = SseClient.open(hub, "/v1/inbox/stream", worker, null)) {
                live.expectReady(WAIT);
                assertEquals(id, live.nextEvent(WAIT).json().get("id").asText());
                assertEquals(200, hub.post(worker, at + "/claim", obj()).status());

                moveOn(Sweep.CLAIM_AGE.plusSeconds(1)); // no heartbeat came: the claim is stale
                assertEquals(new Claims.Swept(0, 1, 0, 0), hub.hub().sweep(), "taken back; nothing of the hub's to kill");
                JsonNode message = hub.get(lead, at).json();
                assertEquals("delivered", message.get("state").asText(), "pending again");
                assertTrue(message.get("timeline").toString().contains("claim taken back: claimed 61s ago and no"
                        + " heartbeat since"), message::toString);
                assertError(hub.post(worker, at + "/claim", obj()), 409, "claim_backoff");
                // once its 5 s backoff is over it is delivered again, to the live stream too
                moveOn(Sweep.BACKOFF.plusSeconds(1));
                JsonNode again = live.nextEvent(WAIT).json();
                assertEquals(id, again.get("id").asText());
                assertEquals(2, again.get("trace").get("attempt").asInt());
            }
            assertEquals(200, hub.post(worker, at + "/claim", obj()).status(), "claimable after its backoff");
            for (int tries = 1; tries < Sweep.MAX_TRIES - 1; tries++) {
                moveOn(Sweep.CLAIM_AGE.plusSeconds(1));
                assertEquals(new Claims.Swept(0, 1, 0, 0), hub.hub().sweep());
                assertError(hub.post(worker, at + "/claim", obj()), 409, "claim_backoff");
                moveOn(Sweep.BACKOFF.multipliedBy(1L << tries).plusSeconds(1));
                HubFixture.Resp claimed = hub.post(worker, at + "/claim", obj());
                assertEquals(tries + 1, claimed.get("tries").asInt(), claimed::toString);
            }
            moveOn(Sweep.CLAIM_AGE.plusSeconds(1));
            assertEquals(new Claims.Swept(0, 0, 1, 0), hub.hub().sweep(), "the fifth time it is given up");
            assertEquals("dead_lettered", hub.get(lead, at).text("state"));
            JsonNode notice = hub.inbox(lead).stream().filter(e -> "dead_letter".equals(e.get("kind").asText()))
                    .findFirst().orElseThrow();
            assertEquals(id, notice.get("corrId").asText());
            assertTrue(notice.get("text").asText().contains("taken back 5 times"), notice::toString);
            String audit = hub.get(hub.admin(), "/v1/audit?action=claim.give_up").body();
            assertTrue(audit.contains(id), audit);
            assertEquals(4, hub.get(hub.admin(), "/v1/audit?action=claim.reset").items().size());
            String metrics = hub.get(hub.admin(), "/metrics").body();
            assertTrue(metrics.contains("parley_claims_reset_total 4") && metrics.contains("parley_claims_given_up_total 1"),
                    metrics);
        }
    }

    @Test
    void theExampleShellAgentAnswersAsAProcessAgentAndAStuckOneIsKilledByTheSweep() throws Exception {
        try (HubFixture hub = start()) {
            // the first envelope hangs its command (SIGSTOP makes its process silent too); later ones answer
            String lead = shellAgentFor(hub, "\"if [ -e once ]; then tr a-z A-Z; else touch once; exec sleep 600; fi\"",
                    "5m");
            String id = hub.sendOk(lead, "upper", "hello").text("id");
            // claimed, and its first heartbeat in: the agent runs its command (the envelope's status shows the claim)
            await().atMost(WAIT).until(() -> hub.get(lead, "/v1/messages/" + id).json().at("/claim/heartbeat/tool")
                    .asText().equals("sh"));
            Path pidFile = tmp.resolve("hub").resolve("agents").resolve("upper.pid");
            long first = Long.parseLong(Files.readString(pidFile).strip().split(" ")[0]);
            ProcessHandle process = ProcessHandle.of(first).orElseThrow();
            // and its command is past its marker, hanging: stopped earlier, the next run would hang too
            await().atMost(WAIT).until(() -> process.descendants().anyMatch(p -> p.info().command().orElse("")
                    .endsWith("/sleep") && List.of("600").equals(p.info().arguments().map(List::of).orElse(List.of()))));
            assertEquals(0, new ProcessBuilder("kill", "-STOP", "--", "-" + first).start().waitFor(), "stopped");

            moveOn(Sweep.CEILING.plusMinutes(1));
            Claims.Swept swept = hub.hub().sweep();
            assertEquals(1, swept.reset(), swept::toString);
            assertEquals(1, swept.killed(), swept::toString);
            assertTrue(process.onExit().get(10, TimeUnit.SECONDS) != null && !process.isAlive(), "killed");

            // its supervisor starts it again; the envelope, once its backoff is over, is answered
            moveOn(Sweep.BACKOFF.plusSeconds(1));
            await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + id).text("state")));
            JsonNode reply = hub.inbox(lead).stream().filter(e -> id.equals(e.path("corrId").asText())).findFirst()
                    .orElseThrow();
            assertEquals("HELLO", reply.get("text").asText());
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=claim.reset").body().contains(id));
            String log = hub.get(hub.admin(), "/v1/agents/upper/logs").body();
            assertTrue(log.contains("the sweep found its process stuck and killed it"), log);
            assertEquals("running", hub.get(hub.admin(), "/v1/agents/upper").text("state"));
            assertFalse(ProcessHandle.of(first).isPresent() && ProcessHandle.of(first).get().isAlive());
        }
    }

    @Test
    void anAgentsViewShowsTheLatestHeartbeatOfItsClaimsAndTheToolItNamed() {
        try (HubFixture hub = start()) {
            String lead = shellAgentFor(hub, "\"exec sleep 600\"", "5m");
            JsonNode before = hub.get(hub.admin(), "/v1/agents/upper").json();
            assertTrue(before.get("currentTool").isNull() && before.get("lastHeartbeatAt").isNull(), before::toString);
            String id = hub.sendOk(lead, "upper", "hang").text("id");
            // the example agent claims the envelope and heartbeats while its command (sh) runs
            await().atMost(WAIT).until(() -> "sh".equals(hub.get(hub.admin(), "/v1/agents/upper").json()
                    .path("currentTool").asText(null)));
            JsonNode claim = hub.get(lead, "/v1/messages/" + id).json().get("claim");
            JsonNode agent = hub.get(hub.admin(), "/v1/agents").items().getFirst();
            assertEquals("upper", agent.get("id").asText());
            assertEquals("sh", agent.get("currentTool").asText(), agent::toString);
            assertFalse(Instant.parse(agent.get("lastHeartbeatAt").asText())
                    .isBefore(Instant.parse(claim.at("/heartbeat/at").asText())), () -> agent + " " + claim);
            assertTrue(hub.get(lead, "/v1/agents").items().isEmpty(), "the one visibility rule: lead is not its parent");
        }
    }

    @Test
    void aProcessAgentWhoseProcessIsKilledCountsTheRestartItsSupervisorMakes() throws Exception {
        try (HubFixture hub = start()) {
            assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", """
                    id: sleeper
                    runner: process
                    command: [sleep, "600"]
                    wake: always
                    """)).status());
            Path pidFile = tmp.resolve("hub").resolve("agents").resolve("sleeper.pid");
            await().atMost(WAIT).ignoreExceptions().until(() -> Files.readString(pidFile).endsWith("\n"));
            assertEquals(0, hub.get(hub.admin(), "/v1/agents/sleeper").num("restarts"));
            long first = Long.parseLong(Files.readString(pidFile).strip().split(" ")[0]);
            ProcessHandle process = ProcessHandle.of(first).orElseThrow();
            assertTrue(process.destroyForcibly(), "killed");
            process.onExit().get(10, TimeUnit.SECONDS);
            await().atMost(WAIT).until(() -> hub.get(hub.admin(), "/v1/agents/sleeper").num("restarts") >= 1);
            assertEquals("running", hub.get(hub.admin(), "/v1/agents/sleeper").text("state"));
            assertEquals(1, hub.get(hub.admin(), "/v1/agents").items().getFirst().get("restarts").asLong());
        }
    }

    @Test
    void anIdleProcessAgentIsStoppedAndOnlyMailStartsItAgainWithAFreshTokenItsCommandsNeverSee() {
        try (HubFixture hub = start()) {
            String lead = shellAgentFor(hub, "'tr a-z A-Z; test -z \"$PARLEY_TOKEN\" || echo token leaked'", "1s");
            for (String text : List.of("one", "two")) {
                String id = hub.sendOk(lead, "upper", text).text("id");
                await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + id).text("state")));
                await().atMost(WAIT).until(() -> "idle".equals(hub.get(hub.admin(), "/v1/agents/upper").text("state")));
                JsonNode reply = hub.inbox(lead).stream().filter(e -> id.equals(e.path("corrId").asText())).findFirst()
                        .orElseThrow();
                assertEquals(text.toUpperCase(java.util.Locale.ROOT), reply.get("text").asText(),
                        "the command runs without the agent's token");
            }
            String log = hub.get(hub.admin(), "/v1/agents/upper/logs").body();
            assertEquals(2, log.lines().filter(l -> l.contains("started its process")).count(), log);
            assertEquals(2, hub.get(hub.admin(), "/v1/audit?action=token.rotate").items().size(),
                    "a token for each start");
        }
    }

    @Test
    void aProcessThatKeepsExitingBacksOffAndFailsItsAgentWithoutSpinning() {
        try (HubFixture hub = start()) {
            assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", """
                    id: crasher
                    runner: process
                    command: [sh, -c, "echo starting; exit 3"]
                    wake: always
                    """)).status());
            await().atMost(Duration.ofSeconds(60)).until(() -> "failed".equals(
                    hub.get(hub.admin(), "/v1/agents/crasher").text("state")));
            String failure = hub.get(hub.admin(), "/v1/agents/crasher").text("failure");
            assertTrue(failure.contains("ended " + AgentRuntime.MAX_CRASHES + " times in a row"), failure);
            String log = hub.get(hub.admin(), "/v1/agents/crasher/logs").body();
            assertEquals(AgentRuntime.MAX_CRASHES, log.lines().filter(l -> l.equals("starting")).count(), log);
            assertTrue(log.contains("starting it again in 8000 ms"), log);
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=agent.fail").body().contains("crasher"));
        }
    }

    /**
     * Node lead, and agent upper (reached by lead): the example shell agent running
     * {@code sh -c SCRIPT} (YAML-quoted) for each envelope, with {@code idleTimeout}. Answers lead's token.
     */
    private static String shellAgentFor(HubFixture hub, String script, String idleTimeout) {
        assumeTrue(onPath("curl") && onPath("jq"), "the example shell agent needs curl and jq");
        String lead = hub.createNode("lead", null);
        assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", """
                id: upper
                runner: process
                command: [sh, %s, sh, -c, %s]
                idleTimeout: %s
                comms: {allow: [lead]}
                """.formatted(SHELL_AGENT, script, idleTimeout))).status());
        return lead;
    }

    /** Nodes lead and worker (lead's child), and an envelope lead sent worker. */
    private static Sent sent(HubFixture hub) {
        String lead = hub.createNode("lead", null);
        String worker = hub.createNode("worker", "lead");
        return new Sent(lead, worker, hub.sendOk(lead, "worker", "do it").text("id"));
    }

    private record Sent(String lead, String worker, String id) {
    }

    private static boolean onPath(String program) {
        return java.util.Arrays.stream(System.getenv("PATH").split(":"))
                .anyMatch(dir -> Files.isExecutable(Path.of(dir, program)));
    }
}
