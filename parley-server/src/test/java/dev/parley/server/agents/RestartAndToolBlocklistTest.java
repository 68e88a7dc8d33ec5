package dev.parley.server.agents;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.AgentSpec;
import dev.parley.core.ToolKind;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A process agent's {@code restart} policy and any agent's {@code toolBlocklist} and
 * {@code toolKinds}, with real processes on a real hub: each command appends a line to a file
 * when it starts, so the test counts the starts; nothing sleeps.
 */
class RestartAndToolBlocklistTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @Test
    void underNeverAFailingProcessFailsItsAgentWhichIsNotStartedAgainAlsoAfterAHubRestart() {
        Path runs = tmp.resolve("runs");
        Path data = tmp.resolve("hub");
        try (HubFixture hub = HubFixture.start(data)) {
            startAgent(hub, """
                    id: once
                    runner: process
                    wake: always
                    restart: never
                    command: [sh, -c, 'echo run >> "%s"; exit 3']
                    """.formatted(runs));
            await().atMost(WAIT).until(() -> "failed".equals(agent(hub, "once").path("state").asText()));
            assertEquals("its process exited with status 3 (restart: never)", agent(hub, "once").path("failure")
                    .asText());
            assertEquals(1, starts(runs));
            assertEquals(1, hub.get(hub.admin(), "/v1/agents/once/logs").body().lines()
                    .filter(l -> l.contains("started its process")).count());
            JsonNode fail = hub.get(hub.admin(), "/v1/audit?action=agent.fail").items().getFirst();
            assertEquals(List.of("hub", "once", "its process exited with status 3 (restart: never)"),
                    List.of(fail.path("actor").asText(), fail.path("target").asText(), fail.path("reason").asText()));
        }
        try (HubFixture hub = HubFixture.start(data)) {
            assertEquals("failed", agent(hub, "once").path("state").asText(), "the failure outlives the hub");
            assertEquals(1, starts(runs));
        }
    }

    /**
     * {@code on-failure} with {@code wake: always}: the first run exits 1 and is started again
     * (after the crash loop's first backoff); the second exits 0, which stops the agent, written
     * down as a stop of the hub's, so that a hub restart leaves it stopped until it is restarted.
     */
    @Test
    void underOnFailureAFailureIsStartedAgainAndStatusZeroStopsTheAgentUntilRestarted() {
        Path runs = tmp.resolve("runs");
        Path data = tmp.resolve("hub");
        try (HubFixture hub = HubFixture.start(data)) {
            startAgent(hub, """
                    id: finisher
                    runner: process
                    wake: always
                    restart: on-failure
                    command: [sh, -c, 'echo run >> "%1$s"; test "$(wc -l < "%1$s")" -ge 2']
                    """.formatted(runs));
            await().atMost(WAIT).until(() -> "stopped".equals(listed(hub, "finisher").path("state").asText()));
            assertEquals(2, starts(runs), "started again after status 1, not after status 0");
            String log = hub.get(hub.admin(), "/v1/agents/finisher/logs").body();
            assertTrue(log.contains("its process exited with status 1") && log.contains("starting it again in 1000 ms")
                    && log.contains("its process exited with status 0 (restart: on-failure): not started again until"
                    + " restarted"), log);
            JsonNode stop = hub.get(hub.admin(), "/v1/audit?action=agent.stop").items().getFirst();
            assertEquals(List.of("hub", "finisher"), List.of(stop.path("actor").asText(),
                    stop.path("target").asText()));
            assertTrue(stop.path("reason").asText().contains("status 0 (restart: on-failure)"), stop::toString);
        }
        try (HubFixture hub = HubFixture.start(data)) {
            assertEquals("stopped", listed(hub, "finisher").path("state").asText(), "the stop outlives the hub");
            assertEquals(2, starts(runs));
            assertEquals("running", hub.post(hub.admin(), "/v1/agents/finisher/restart", obj()).text("state"));
            await().atMost(WAIT).until(() -> starts(runs) == 3
                    && "stopped".equals(listed(hub, "finisher").path("state").asText()));
        }
    }

    /**
     * {@code on-failure} with {@code wake: on-message}: status 0 is an idle stop. The process here
     * leaves its envelope unsettled; that mail does not start it again (it would spin), the next
     * envelope does.
     */
    @Test
    void underOnFailureStatusZeroOfAnOnMessageAgentIsAnIdleStopAndTheNextEnvelopeWakesIt() {
        Path runs = tmp.resolve("runs");
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            startAgent(hub, """
                    id: sleepy
                    runner: process
                    restart: on-failure
                    command: [sh, -c, 'echo run >> "%s"']
                    comms: {allow: [lead]}
                    """.formatted(runs));
            for (int sent = 1; sent <= 2; sent++) {
                hub.sendOk(lead, "sleepy", "wake up " + sent);
                int expected = sent;
                await().atMost(WAIT).until(() -> starts(runs) == expected
                        && "idle".equals(agent(hub, "sleepy").path("state").asText())
                        && stoppedUntilTheNextEnvelope(hub) == expected);
            }
            assertEquals(2, starts(runs), "one start an envelope");
        }
    }

    /**
     * The blocklist and the tool kinds reach every process of the agent, either runner, as
     * PARLEY_TOOL_BLOCKLIST and PARLEY_TOOL_KINDS, which read back as the spec wrote them; none:
     * no variable.
     */
    @Test
    void theToolBlocklistAndToolKindsReachTheProcessesOfBothRunners() {
        Path seen = tmp.resolve("seen");
        String both = "printf '%s|%s' \"${PARLEY_TOOL_BLOCKLIST-absent}\" \"${PARLEY_TOOL_KINDS-absent}\"";
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"))) {
            String lead = hub.createNode("lead", null);
            startAgent(hub, """
                    id: blocked
                    command: [sh, -c, '%s']
                    toolBlocklist: [Bash, "mcp__github__*", WebFetch]
                    toolKinds: {"mcp__github__*": fetch, Deploy: execute}
                    comms: {allow: [lead]}
                    """.formatted(both.replace("'", "''")));
            startAgent(hub, """
                    id: free
                    command: [sh, -c, '%s']
                    comms: {allow: [lead]}
                    """.formatted(both.replace("'", "''")));
            startAgent(hub, """
                    id: worker
                    runner: process
                    wake: always
                    restart: never
                    command: [sh, -c, '%s > "%s"']
                    toolBlocklist: [Read]
                    toolKinds: {Read: search}
                    """.formatted(both.replace("'", "''"), seen));
            String blocked = answer(hub, lead, "blocked");
            assertEquals("Bash,mcp__github__*,WebFetch|Deploy=execute,mcp__github__*=fetch", blocked);
            assertEquals(Map.of("mcp__github__*", ToolKind.FETCH, "Deploy", ToolKind.EXECUTE),
                    AgentSpec.ToolKindOverrides.read(Optional.of(blocked.split("\\|")[1])).kinds());
            assertEquals("absent|absent", answer(hub, lead, "free"));
            await().atMost(WAIT).until(() -> "stopped".equals(agent(hub, "worker").path("state").asText()));
            assertEquals("Read|Read=search", read(seen));
        }
    }

    /** What agent {@code to} answers lead's envelope with. */
    private static String answer(HubFixture hub, String lead, String to) {
        String id = hub.sendOk(lead, to, "which tools?").text("id");
        await().atMost(WAIT).until(() -> "replied".equals(hub.get(lead, "/v1/messages/" + id).text("state")));
        return hub.inbox(lead).stream().filter(e -> id.equals(e.path("corrId").asText())).findFirst().orElseThrow()
                .path("text").asText();
    }

    private static long stoppedUntilTheNextEnvelope(HubFixture hub) {
        return hub.get(hub.admin(), "/v1/agents/sleepy/logs").body().lines()
                .filter(l -> l.contains("exited with status 0 (restart: on-failure): stopped until the next envelope"))
                .count();
    }

    private static void startAgent(HubFixture hub, String spec) {
        HubFixture.Resp started = hub.post(hub.admin(), "/v1/agents", obj("spec", spec));
        assertEquals(201, started.status(), started::toString);
    }

    private static JsonNode agent(HubFixture hub, String id) {
        return hub.get(hub.admin(), "/v1/agents/" + id).json();
    }

    /** The agent as the list shows it ({@code parley agent list}). */
    private static JsonNode listed(HubFixture hub, String id) {
        return hub.get(hub.admin(), "/v1/agents").items().stream().filter(a -> id.equals(a.path("id").asText()))
                .findFirst().orElseThrow();
    }

    /** How many times a command started: the lines it appended to {@code runs}. */
    private static long starts(Path runs) {
        return Files.exists(runs) ? read(runs).lines().count() : 0;
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
