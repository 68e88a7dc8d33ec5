package dev.parley.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.HubConfig;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import dev.parley.server.it.LogCapture;
import dev.parley.server.rest.MessageRoutes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.logging.Level;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.rfc3339;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The audit log's filters, its JSON Lines export, and its retention. */
class AuditQueryTest {
    @TempDir
    Path dir;
    private HubFixture hub;

    @AfterEach
    void stop() {
        if (hub != null) {
            hub.close();
        }
    }

    private List<JsonNode> audit(String query) {
        return assertStatus(200, hub.get(hub.admin(), "/v1/audit" + query)).items();
    }

    private List<JsonNode> lines(String query) {
        Resp r = hub.get(hub.admin(), "/v1/audit" + query);
        assertEquals(200, r.status(), r::toString);
        assertEquals("application/x-ndjson", r.headers().firstValue("Content-Type").orElse(""));
        List<JsonNode> out = new ArrayList<>();
        for (String line : r.body().split("\n")) {
            if (!line.isEmpty()) {
                try {
                    out.add(HubFixture.JSON.readTree(line));
                } catch (IOException e) {
                    throw new UncheckedIOException("not a JSON line: " + line, e);
                }
            }
        }
        assertTrue(r.body().isEmpty() || r.body().endsWith("\n"), "every line ends with a newline");
        return out;
    }

    private static List<Long> ids(List<JsonNode> entries) {
        return entries.stream().map(e -> e.get("id").asLong()).toList();
    }

    @Test
    void filtersByRuleActionDecisionNodeAndTimeAndPagesWithBefore() throws Exception {
        Path file = dir.resolve("policy.json");
        PolicyFiles.write(file, PolicyFiles.json(List.of(PolicyFiles.deny("no-w2", "target.id == 'w2'"))));
        hub = HubFixture.start(dir.resolve("data"), c -> c.withPolicy(Optional.of(file)));
        String lead = hub.createNode("lead", null);
        hub.createNode("w1", "lead");
        hub.createNode("w2", "lead");
        Instant start = Instant.now().minusMillis(1);
        for (int i = 0; i < 5; i++) {
            hub.sendOk(lead, "w1", "m" + i);
            assertError(hub.send(lead, "w2", "m" + i), 403, "acl_denied");
        }
        Instant mid = Instant.parse(audit("?action=send&limit=1").getFirst().get("at").asText()).plusMillis(1);

        List<JsonNode> byRule = audit("?rule=no-w2");
        assertEquals(5, byRule.size());
        byRule.forEach(e -> {
            assertEquals("deny", e.get("decision").asText());
            assertEquals("no-w2", e.get("rule").asText());
        });
        assertEquals(byRule, audit("?rule=no-w2&decision=deny&action=send&node=w2"));
        assertTrue(audit("?rule=no-w2&decision=allow").isEmpty());
        assertTrue(audit("?rule=other").isEmpty());

        List<JsonNode> sends = audit("?action=send");
        assertEquals(10, sends.size());
        assertTrue(sends.stream().allMatch(e -> e.get("action").asText().equals("send")));
        assertEquals(3, audit("?action=node.create").size());
        assertEquals(5, audit("?action=send&decision=allow&node=w1").size());

        List<Long> all = ids(audit("?limit=1000"));
        List<Long> sorted = new ArrayList<>(all);
        sorted.sort((a, b) -> Long.compare(b, a));
        assertEquals(sorted, all, "newest first");

        // Time: since is inclusive, until exclusive.
        assertEquals(10, audit("?action=send&since=" + rfc3339(start)).size());
        assertTrue(audit("?since=" + rfc3339(mid)).isEmpty());
        assertEquals(audit("?limit=1000").size(), audit("?until=" + rfc3339(mid) + "&limit=1000").size());
        assertTrue(audit("?until=" + rfc3339(start.minusSeconds(60))).isEmpty());
        assertEquals(10, audit("?action=send&since=" + rfc3339(start).replace("Z", "%2B00:00")).size(), "offsets parse");

        // Paging: next is the id to pass as before=, null on the last page.
        Resp first = hub.get(hub.admin(), "/v1/audit?action=send&limit=4");
        assertEquals(4, first.items().size());
        long next = first.num("next");
        assertEquals(ids(first.items()).getLast(), next);
        Resp second = hub.get(hub.admin(), "/v1/audit?action=send&limit=4&before=" + next);
        Resp third = hub.get(hub.admin(), "/v1/audit?action=send&limit=4&before=" + second.num("next"));
        assertEquals(2, third.items().size());
        assertTrue(third.get("next").isNull());
        List<Long> paged = new ArrayList<>(ids(first.items()));
        paged.addAll(ids(second.items()));
        paged.addAll(ids(third.items()));
        assertEquals(ids(sends), paged);

        assertError(hub.get(hub.admin(), "/v1/audit?since=yesterday"), 400, "invalid_request");
        assertError(hub.get(hub.admin(), "/v1/audit?until=2026-13-01T00:00:00Z"), 400, "invalid_request");
        assertError(hub.get(hub.admin(), "/v1/audit?format=xml"), 400, "invalid_request");
        assertError(hub.get(hub.admin(), "/v1/audit?before=0"), 400, "invalid_request");
        assertError(hub.get(hub.admin(), "/v1/audit?limit=1001"), 400, "invalid_request");
        assertError(hub.get(lead, "/v1/audit?format=jsonl"), 403, "forbidden");
    }

    @Test
    void exportsJsonLinesStreamingEverythingOrAPage() {
        hub = HubFixture.start(dir);
        String lead = hub.createNode("lead", null);
        List<String> senders = new ArrayList<>();
        for (int n = 0; n < 4; n++) {
            senders.add(hub.createNode("w" + n, "lead"));
        }
        for (int i = 0; i < 1204; i++) { // more than one page of the export's reads, spread within the rate limits
            hub.sendOk(senders.get(i % 4), "lead", "m" + i);
        }
        List<JsonNode> everything = lines("?format=jsonl");
        assertEquals(1209, everything.size(), "five node creations and every send");
        List<Long> ids = ids(everything);
        assertEquals(ids.stream().distinct().count(), ids.size(), "no entry twice across pages");
        for (int i = 1; i < ids.size(); i++) {
            assertTrue(ids.get(i) < ids.get(i - 1), "newest first across pages");
        }
        JsonNode line = everything.getFirst();
        for (String field : List.of("id", "at", "actor", "action", "target", "decision", "reason", "envelopeId",
                "policyVersion", "rule")) {
            assertTrue(line.has(field), field + " missing in " + line);
        }
        assertEquals(audit("?limit=1"), List.of(line), "the same view as the JSON answer");

        List<JsonNode> page = lines("?format=jsonl&action=send&limit=10");
        assertEquals(10, page.size());
        List<JsonNode> nextPage = lines("?format=jsonl&action=send&limit=10&before=" + page.getLast().get("id").asLong());
        assertEquals(10, nextPage.size());
        assertTrue(nextPage.getFirst().get("id").asLong() < page.getLast().get("id").asLong());
        assertEquals(1204, lines("?format=jsonl&action=send").size());
        assertTrue(lines("?format=jsonl&action=nothing").isEmpty());
    }

    /**
     * Retention against the real clock, without timing the machine: an entry is old only by
     * its own time, so what a slow run may have lost is known, and what must stay is checked.
     */
    @Test
    void retentionPrunesOldEntriesThroughTheWriter() {
        Duration retention = Duration.ofMillis(1500);
        hub = HubFixture.start(dir, c -> c.withAuditRetention(retention));
        String lead = hub.createNode("lead", null);
        String w1 = hub.createNode("w1", "lead");
        List<Instant> sentAt = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            sentAt.add(Instant.now());
            hub.sendOk(lead, "w1", "m" + i);
        }
        List<JsonNode> kept = audit("?action=send");
        Instant read = Instant.now();
        // An entry is stamped after its send began; one younger than the retention when the read
        // ended cannot have been pruned before it. (Normally all 20 are; a slow run may age some.)
        long fresh = sentAt.stream().filter(at -> !at.isBefore(read.minus(retention))).count();
        assertTrue(kept.size() >= fresh, "fresh entries are kept: " + kept.size() + " of " + fresh);

        // 2 node creations and 20 sends age out, and each is counted once
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50))
                .until(() -> audit("?limit=1000").isEmpty() && hub.metric("parley_audit_pruned_total") == 22);
        // The log goes on: a new entry is written, and pruned in turn once it ages.
        hub.sendOk(lead, "w1", "after pruning");
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50))
                .until(() -> hub.metric("parley_audit_pruned_total") == 23);
        assertEquals(21, hub.inbox(w1).size(), "pruning touches only the audit log");
    }

    @Test
    void theDefaultRetentionIsThirtyDays() {
        assertEquals(Duration.ofDays(30), HubConfig.defaults(dir).policy().auditRetention());
        hub = HubFixture.start(dir);
        String lead = hub.createNode("lead", null);
        hub.sendOk(lead, "lead", "to myself");
        assertEquals(2, audit("").size());
    }

    /**
     * A reader that leaves in the middle of a JSON Lines export: the export's next write fails,
     * and the connection is closed without an answer and without an alarm, as for any client
     * that goes away (ten megabytes of entries, more than the sockets between them can hold).
     */
    @Test
    void anExportWhoseReaderLeavesEndsQuietly() throws Exception {
        hub = HubFixture.start(dir, HubFixture::unthrottled);
        String lead = hub.createNode("lead", null);
        hub.createNode("w1", "lead");
        List<Object> messages = new ArrayList<>();
        for (int i = 0; i < MessageRoutes.MAX_BATCH; i++) {
            messages.add(HubFixture.obj("to", "w1", "text", "m" + i));
        }
        for (int batch = 0; batch < 30; batch++) {
            assertEquals(1000L, assertStatus(200, hub.post(lead, "/v1/messages:batch", HubFixture.obj("messages", messages))).num("accepted"));
        }
        double connections = hub.metric("parley_open_connections");
        try (LogCapture routes = LogCapture.of("dev.parley.server.http.Routes")) {
            try (Socket reader = new Socket()) {
                reader.setReceiveBufferSize(4096);
                reader.connect(new InetSocketAddress("127.0.0.1", hub.port()));
                reader.getOutputStream().write(("GET /v1/audit?format=jsonl HTTP/1.1\r\nHost: parley\r\n"
                        + "Authorization: Bearer " + hub.admin() + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                assertEquals("HTTP/1.1 200", new String(reader.getInputStream().readNBytes(12), StandardCharsets.US_ASCII));
                reader.setSoLinger(true, 0); // closed with a reset: the export's next write fails
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> hub.metric("parley_open_connections") <= connections);
            assertEquals(List.of(), routes.messages(Level.SEVERE, ""), "a reader that leaves is no failure of the hub");
        }
        assertEquals(1, audit("?action=send&limit=1").size(), "the hub still answers");
    }
}
