package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
    private SmallDisk disk;
    private HubFixture hub;

    @AfterEach
    void unmount() throws Exception {
        try {
            if (hub != null) {
                hub.close();
            }
        } finally {
            if (disk != null) {
                disk.close();
            }
        }
    }

    @Test
    void aFullDiskRefusesWritesKeepsReadsAndResumesWhenSpaceReturns() throws Exception {
        disk = SmallDisk.mount(dir);
        // the loop below sends until the disk refuses: however fast, the rate limit must not answer first
        hub = HubFixture.start(disk.resolve("data"), HubFixture::unthrottled);
        String lead = hub.createNode("lead", null);
        String worker = hub.createNode("worker", "lead");
        String poller = hub.createNode("poller", "lead"); // reads by polling only: nothing marks its mail delivered
        String polled = hub.sendOk(lead, "poller", "read me while the disk is full").text("id");
        List<String> accepted = new ArrayList<>();
        try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", worker, null)) {
            assertEquals(200, stream.awaitStatus(Duration.ofSeconds(10)));
            for (int i = 0; i < 5; i++) {
                accepted.add(hub.sendOk(lead, "worker", "before " + i + " " + TEXT).text("id"));
            }

            Path filler = disk.fill();
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

            // reads and streams go on: status, the inbox by cursor, the open stream, a new stream, and a
            // node's own poll, whose delivery mark may not fit (pages the WAL already has may hold it)
            assertEquals(List.of(polled), ids(hub.inbox(poller)), "a poll is answered on a full disk");
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
        assertEquals(List.of(polled), ids(hub.inbox(poller)), "polled again once space is back");
        assertEquals("delivered", hub.status(lead, polled).text("state"), "and delivered by now");
        // Audit entries are folded into the by-node index after their commit: those written before the
        // disk filled, while it was full and after are all found by node, once each, and no refused send's.
        HubFixture.Resp audit = hub.get(hub.admin(), "/v1/audit?node=worker&action=send&format=jsonl");
        assertEquals(200, audit.status(), audit::toString);
        List<String> audited = new ArrayList<>();
        for (String line : audit.body().split("\n")) {
            audited.addFirst(HubFixture.JSON.readTree(line).get("envelopeId").asText()); // the log is newest first
        }
        assertEquals(accepted, audited);
    }

    private static List<String> ids(List<JsonNode> envelopes) {
        return envelopes.stream().map(e -> e.get("id").asText()).toList();
    }
}
