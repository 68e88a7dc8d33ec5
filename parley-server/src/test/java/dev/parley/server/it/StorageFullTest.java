package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hub whose data directory fills up: on a real, small tmpfs (mounting one needs root;
 * elsewhere the test is skipped and {@code WriterRecoveryTest} covers the writer with an
 * injected failure). Writes are refused with 507 {@code storage_full}, {@code /healthz}
 * says so, reads and streams go on, and once space is freed writes resume by themselves
 * with every accepted envelope there exactly once.
 */
class StorageFullTest {
    private static final String TEXT = "x".repeat(2048);

    @TempDir
    Path dir;
    private Path mount;
    private HubFixture hub;

    @AfterEach
    void unmount() throws Exception {
        try {
            if (hub != null) {
                hub.close();
            }
        } finally {
            if (mount != null && !run("umount", mount.toString()).isEmpty()) {
                run("umount", "--lazy", mount.toString()); // a file still open (a failed run): detach it anyway
            }
        }
    }

    @Test
    void aFullDiskRefusesWritesKeepsReadsAndResumesWhenSpaceReturns() throws Exception {
        Path mountPoint = Files.createDirectories(dir.resolve("tmpfs"));
        String mounted = run("mount", "-t", "tmpfs", "-o", "size=16m", "parley-storage-full-test", mountPoint.toString());
        assumeTrue(mounted.isEmpty(), "skipped: a small tmpfs for the data directory needs root (mount said: "
                + mounted + ")");
        mount = mountPoint;
        hub = HubFixture.start(mount.resolve("data"));
        String lead = hub.createNode("lead", null);
        String worker = hub.createNode("worker", "lead");
        List<String> accepted = new ArrayList<>();
        try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", worker, null)) {
            assertEquals(200, stream.awaitStatus(Duration.ofSeconds(10)));
            for (int i = 0; i < 5; i++) {
                accepted.add(hub.sendOk(lead, "worker", "before " + i + " " + TEXT).text("id"));
            }

            Path filler = fill(mount.resolve("filler"));
            HubFixture.Resp refused = null;
            for (int i = 0; i < 10_000 && refused == null; i++) { // pages the WAL already has may take a few more
                HubFixture.Resp r = hub.send(lead, "worker", "while full " + i + " " + TEXT);
                if (r.status() == 202) {
                    accepted.add(r.text("id"));
                } else {
                    refused = r;
                }
            }
            assertNotNull(refused, "the full disk refused no send");
            assertError(refused, 507, "storage_full");
            assertError(hub.send(lead, "worker", "still full"), 507, "storage_full");
            assertError(hub.post(hub.admin(), "/v1/nodes", HubFixture.obj("id", "newcomer")), 507, "storage_full");
            HubFixture.Resp health = hub.get(null, "/healthz");
            assertEquals(503, health.status(), health::toString);
            assertEquals("degraded", health.text("status"));
            assertEquals("full", health.text("store"));

            // reads and streams go on: status, the inbox by cursor, the open stream, a new stream
            assertEquals(200, hub.status(lead, accepted.getFirst()).status());
            assertEquals(accepted, ids(hub.inboxAll(worker, "/v1/inbox")));
            assertEquals(accepted, stream.nextEvents(accepted.size(), Duration.ofSeconds(10)).stream()
                    .map(f -> f.json().get("id").asText()).toList(), "the open stream had every accepted envelope");
            try (SseClient replay = SseClient.open(hub, "/v1/inbox/stream", worker, "0")) {
                assertEquals(accepted, replay.nextEvents(accepted.size(), Duration.ofSeconds(10)).stream()
                        .map(f -> f.json().get("id").asText()).toList(), "a new stream replays from the store");
            }

            Files.delete(filler);
            await().atMost(Duration.ofSeconds(20)).until(() -> hub.get(null, "/healthz").status() == 200);
            assertEquals("ok", hub.get(null, "/healthz").text("status"));
            List<String> after = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                after.add(hub.sendOk(lead, "worker", "after " + i).text("id"));
            }
            accepted.addAll(after);
            assertEquals(after, stream.nextEvents(after.size(), Duration.ofSeconds(10)).stream()
                    .map(f -> f.json().get("id").asText()).toList(), "the open stream goes on");
        }
        List<JsonNode> inbox = hub.inboxAll(worker, "/v1/inbox");
        assertEquals(accepted, ids(inbox), "every accepted envelope is stored once, and no refused one");
        assertEquals(LongStream.rangeClosed(1, accepted.size()).boxed().toList(),
                inbox.stream().map(e -> e.get("seq").asLong()).toList(), "refused sends took no seq");
        hub.createNode("newcomer", null);
    }

    private static List<String> ids(List<JsonNode> envelopes) {
        return envelopes.stream().map(e -> e.get("id").asText()).toList();
    }

    /** Writes {@code file} until the filesystem has no space left. */
    private static Path fill(Path file) throws IOException {
        byte[] chunk = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) {
                out.write(chunk);
            }
        } catch (IOException e) {
            if (!e.getMessage().contains("No space left")) {
                throw e;
            }
        }
        return file;
    }

    /** Runs a command; returns its output when it failed, "" when it succeeded. */
    private static String run(String... command) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return e.getMessage();
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return command[0] + " did not finish";
        }
        return p.exitValue() == 0 ? "" : output.isEmpty() ? command[0] + " exited " + p.exitValue() : output;
    }
}
