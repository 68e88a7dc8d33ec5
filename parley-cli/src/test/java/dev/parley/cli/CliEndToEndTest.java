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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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
 * The CLI against a real hub, in-process: each command runs through
 * {@link ParleyCommand#all()} with captured stdout and stderr, exactly as
 * {@link Main} runs it, minus the process exit.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CliEndToEndTest {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path data;

    private Hub hub;
    private final ExecutorService background = Executors.newCachedThreadPool();

    @BeforeEach
    void startHub() {
        hub = Hub.start(HubConfig.defaults(data.resolve("hub")).withPort(0));
    }

    @AfterEach
    void stopEverything() throws InterruptedException {
        background.shutdownNow(); // interrupts any tail still following
        background.awaitTermination(10, TimeUnit.SECONDS);
        hub.close();
    }

    @Test
    void nodeAddAsAdminPrintsTheTokenOnce() {
        CliRun added = parley(as(hub, hub.adminToken(), "node", "add", "lead", "--label", "role=lead"));

        assertEquals(0, added.exit, added::describe);
        assertTrue(added.out().startsWith("created  id=lead  kind="), added::describe);
        assertTrue(Pattern.compile("(?m)^token\\s+pn_\\S+$").matcher(added.out()).find(), added::describe);

        CliRun shown = parley(as(hub, hub.adminToken(), "node", "show", "lead"));
        assertEquals(0, shown.exit, shown::describe);
        assertTrue(shown.out().contains("role=lead"), shown::describe);
        assertFalse(shown.out().contains("pn_"), "a token is shown only when issued");
    }

    @Test
    void sendIsSeenByATailRunningConcurrently() throws Exception {
        String lead = addNode(hub, "lead");
        String worker = addNode(hub, "worker-1", "--parent", "lead");

        CliRun tail = new CliRun();
        Future<Integer> tailing = background.submit(() -> tail.execute(as(hub, worker, "tail", "--count", "1")));
        CliRun sent = parley(as(hub, lead, "send", "--to", "worker-1", "run", "the", "tests"));

        assertEquals(0, sent.exit, sent::describe);
        Matcher receipt = Pattern.compile("^accepted  id=\\S+  seq=(\\d+)  to=worker-1$").matcher(sent.out().strip());
        assertTrue(receipt.matches(), sent::describe);
        assertEquals(0, tailing.get(PATIENCE.toSeconds(), TimeUnit.SECONDS), tail::describe);
        List<Envelope> seen = envelopes(tail);
        assertEquals(List.of(new Envelope(Long.parseLong(receipt.group(1)), "lead", "worker-1", "message",
                "run the tests")), seen, tail::describe);
    }

    @Test
    void sendBatchSendsJsonLinesInOrderAndSaysWhichWereRefused() throws Exception {
        String lead = addNode(hub, "lead");
        String worker = addNode(hub, "worker-1", "--parent", "lead");
        addNode(hub, "stranger");
        Path lines = data.resolve("batch.jsonl");
        Files.writeString(lines, """
                {"to": "worker-1", "text": "first", "messageId": "b-1"}

                {"to": "worker-1", "text": "second"}
                {"to": "stranger", "text": "not in my group"}
                {"to": "worker-1", "text": "first again", "messageId": "b-1"}
                """);

        CliRun sent = parley(as(hub, lead, "send", "--batch", lines.toString()));
        assertEquals(ExitStatus.FORBIDDEN, sent.exit, sent::describe);
        List<String> out = sent.out().lines().toList();
        assertEquals(4, out.size(), sent::describe);
        assertTrue(out.get(0).matches("^accepted  id=\\S+  seq=1  to=worker-1$"), sent::describe);
        assertTrue(out.get(1).matches("^accepted  id=\\S+  seq=2  to=worker-1$"), sent::describe);
        assertTrue(out.get(2).startsWith("refused  error=acl_denied  message="), sent::describe);
        assertTrue(out.get(3).matches("^duplicate  id=\\S+  seq=1  to=worker-1$"), sent::describe);
        CliRun inbox = parley(as(hub, worker, "tail", "--count", "2"));
        assertEquals(List.of("first", "second"), envelopes(inbox).stream().map(Envelope::text).toList(),
                inbox::describe);

        Files.writeString(lines, "{\"to\": \"worker-1\", \"text\": \"fine\"}\nnot json\n");
        CliRun malformed = parley(as(hub, lead, "send", "--batch", lines.toString()));
        assertEquals(ExitStatus.USAGE, malformed.exit, malformed::describe);
        assertTrue(malformed.err().contains("line 2 is not JSON"), malformed::describe);
        assertEquals("", malformed.out(), "the file is read whole before anything is sent");

        // the reason in words, not the JDK's message (which is the path again) nor its class
        Path missing = data.resolve("no-such.jsonl");
        CliRun unreadable = parley(as(hub, lead, "send", "--batch", missing.toString()));
        assertEquals(ExitStatus.USAGE, unreadable.exit, unreadable::describe);
        assertTrue(unreadable.err().contains("--batch: cannot read " + missing + ": file not found"), unreadable::describe);
        CliRun directory = parley(as(hub, lead, "send", "--batch", data.toString()));
        assertEquals(ExitStatus.USAGE, directory.exit, directory::describe);
        assertTrue(directory.err().contains("--batch: cannot read " + data + ": Is a directory"), directory::describe);
    }

    @Test
    void sendBatchSendsAgainWhatTheRateLimitTurnedAwayUntilAllIsAccepted() throws Exception {
        String lead = addNode(hub, "lead");
        addNode(hub, "worker-1", "--parent", "lead");
        CliRun limited = parley(as(hub, hub.adminToken(), "limits", "set", "lead", "--rate", "10", "--burst", "4"));
        assertEquals(ExitStatus.OK, limited.exit, limited::describe);
        StringBuilder jsonl = new StringBuilder();
        for (int i = 1; i <= 12; i++) {
            jsonl.append("{\"to\": \"worker-1\", \"text\": \"m").append(i).append("\"}\n");
        }
        Path lines = data.resolve("limited.jsonl");
        Files.writeString(lines, jsonl);

        CliRun sent = parley(as(hub, lead, "send", "--batch", lines.toString()));
        assertEquals(ExitStatus.OK, sent.exit, sent::describe);
        List<String> out = sent.out().lines().toList();
        assertEquals(12, out.size(), sent::describe);
        for (int i = 0; i < 12; i++) {
            assertTrue(out.get(i).matches("^accepted  id=\\S+  seq=" + (i + 1) + "  to=worker-1$"), sent::describe);
        }
    }

    @Test
    void jsonOutputParsesAcrossAMessageLifecycle() throws Exception {
        String lead = addNode(hub, "lead");
        String worker = addNode(hub, "worker-1", "--parent", "lead");

        JsonNode list = parley(as(hub, hub.adminToken(), "node", "list", "--json")).json();
        assertTrue(list.path("items").findValuesAsText("id").containsAll(List.of("lead", "worker-1")), list::toString);

        JsonNode receipt = parley(as(hub, lead, "send", "--to", "worker-1", "--json", "--data", "{\"n\":1}",
                "--meta", "k=v", "--thread", "t-1", "hello")).json();
        assertEquals("accepted", receipt.path("status").asText(), receipt::toString);
        String id = receipt.path("id").asText();

        JsonNode envelope = parley(as(hub, worker, "tail", "--count", "1", "--json")).json();
        assertEquals(id, envelope.path("id").asText(), envelope::toString);
        assertEquals("hello", envelope.path("text").asText());
        assertEquals(1, envelope.path("data").path("n").asInt());
        assertEquals("t-1", envelope.path("threadId").asText());

        JsonNode acked = parley(as(hub, worker, "ack", id, "--json")).json();
        assertEquals("processed", acked.path("state").asText(), acked::toString);

        JsonNode reply = parley(as(hub, worker, "reply", id, "done", "--json")).json();
        assertEquals("lead", reply.path("to").asText(), reply::toString);

        JsonNode status = parley(as(hub, lead, "status", id, "--json")).json();
        assertEquals("replied", status.path("state").asText(), status::toString);
        assertTrue(status.path("timeline").findValuesAsText("state").containsAll(
                List.of("accepted", "delivered", "processed", "replied")), status::toString);

        JsonNode answer = parley(as(hub, lead, "tail", "--count", "1", "--json")).json();
        assertEquals("reply", answer.path("kind").asText(), answer::toString);
        assertEquals(id, answer.path("corrId").asText());

        JsonNode grant = parley(as(hub, hub.adminToken(), "grant", "add", "--from", "worker-1", "--to", "lead",
                "--ttl", "10m", "--note", "test", "--json")).json();
        assertTrue(parley(as(hub, hub.adminToken(), "grant", "list", "--json")).json().path("items")
                .findValuesAsText("id").contains(grant.path("id").asText()));
        assertTrue(parley(as(hub, hub.adminToken(), "grant", "rm", grant.path("id").asText(), "--json")).json()
                .path("deleted").asBoolean());
        assertTrue(parley(as(hub, worker, "token", "rotate", "worker-1", "--json")).json()
                .path("token").asText().startsWith("pn_"));
        assertTrue(parley(as(hub, hub.adminToken(), "node", "rm", "worker-1", "--json")).json()
                .path("deleted").asBoolean());
    }

    @Test
    void exitCodesTellScriptsWhatWentWrong() throws IOException {
        String alpha = addNode(hub, "alpha");
        addNode(hub, "beta");
        String admin = hub.adminToken();

        assertFailure(parley(as(hub, "pn_not-a-real-token", "node", "list")), ExitStatus.UNAUTHORIZED, "unauthorized");
        assertFailure(parley(as(hub, alpha, "send", "--to", "beta", "hi")), ExitStatus.FORBIDDEN, "acl_denied");
        assertFailure(parley(as(hub, admin, "node", "show", "ghost")), ExitStatus.NOT_FOUND, "node_not_found");
        assertFailure(parley(as(hub, alpha, "send", "--to", "ghost", "hi")), ExitStatus.NOT_FOUND, "node_not_found");
        assertFailure(parley(as(hub, admin, "node", "add", "alpha")), ExitStatus.CONFLICT, "node_exists");
        assertFailure(parley(as(hub, alpha, "send", "--to", "alpha", "--kind", "Not A Kind", "hi")),
                ExitStatus.REFUSED, "invalid_request");
        String nowhere = "http://127.0.0.1:" + freePort();
        assertFailure(parley("node", "list", "--url", nowhere, "--token", admin), ExitStatus.UNREACHABLE, "unreachable");

        CliRun usage = parley(as(hub, alpha, "send", "hi"));
        assertEquals(ExitStatus.USAGE, usage.exit, usage::describe);

        // The grant is what turns the denial into a delivery.
        assertEquals(0, parley(as(hub, admin, "grant", "add", "--from", "alpha", "--to", "beta")).exit);
        CliRun granted = parley(as(hub, alpha, "send", "--to", "beta", "hi"));
        assertEquals(0, granted.exit, granted::describe);
    }

    @Test
    void versionPrintsTheBuildVersion() {
        CliRun version = parley("version");
        assertEquals(0, version.exit, version::describe);
        assertTrue(version.out().strip().matches("parley \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?"), version::describe);
    }

    @Test
    void tailResumesAfterTheHubRestartsWithEveryEnvelopeExactlyOnce() throws Exception {
        int port = freePort();
        Path restartData = data.resolve("restart");
        Hub first = Hub.start(HubConfig.defaults(restartData).withPort(port));
        AtomicReference<Hub> second = new AtomicReference<>();
        try {
            String lead = addNode(first, "lead");
            String worker = addNode(first, "worker-1", "--parent", "lead");
            for (int i = 1; i <= 3; i++) {
                assertEquals(0, parley(as(first, lead, "send", "--to", "worker-1", "m" + i)).exit);
            }

            CliRun tail = new CliRun();
            Future<Integer> tailing = background.submit(() -> tail.execute(as(first, worker, "tail", "--count", "6")));
            await().atMost(PATIENCE).until(() -> envelopes(tail).size() == 3);

            first.close();
            // The same data directory and port: the tail's URL stays valid. The port may take a moment to free.
            await().atMost(PATIENCE).ignoreExceptions()
                    .until(() -> second.updateAndGet(h -> h != null ? h
                            : Hub.start(HubConfig.defaults(restartData).withPort(port))) != null);
            for (int i = 4; i <= 6; i++) {
                CliRun sent = parley(as(second.get(), lead, "send", "--to", "worker-1", "m" + i));
                assertEquals(0, sent.exit, sent::describe);
            }

            assertEquals(0, tailing.get(PATIENCE.toSeconds(), TimeUnit.SECONDS), tail::describe);
            List<Envelope> seen = envelopes(tail);
            assertEquals(List.of("m1", "m2", "m3", "m4", "m5", "m6"), seen.stream().map(Envelope::text).toList(),
                    tail::describe);
            for (int i = 1; i < seen.size(); i++) {
                assertTrue(seen.get(i).seq() > seen.get(i - 1).seq(), tail::describe);
            }
            assertTrue(tail.err().contains("reconnecting"), "the tail should have lost and regained the stream: "
                    + tail.describe());
        } finally {
            first.close();
            if (second.get() != null) {
                second.get().close();
            }
        }
    }
}
