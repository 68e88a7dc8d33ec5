package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code POST /v1/messages:batch} over HTTP against a real hub: one commit for the batch,
 * results in order, idempotency per messageId within and across batches, items refused by
 * themselves (identity, ACL, a CEL rule, a schema, the rate limit), and bodies refused whole.
 */
class BatchSendTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String BATCH = "/v1/messages:batch";

    @TempDir
    static Path dir;
    static HubFixture hub;

    /** Root {@code r} with children {@code c}, {@code c2} and the quarantined {@code q}; root {@code s} with child {@code d}. */
    String r;
    String rToken;
    String c;
    String cToken;
    String c2;
    String q;
    String d;

    @BeforeAll
    static void startHub() throws Exception {
        Path policy = dir.resolve("policy.json");
        Files.writeString(policy, HubFixture.JSON.writeValueAsString(Map.of("rules", List.of(Map.of("name",
                "quarantine", "effect", "deny", "when", "target.labels.?quarantine.orValue('') == 'true'")))));
        hub = HubFixture.start(dir.resolve("data"), config -> config.withPolicy(Optional.of(policy)));
        assertStatus(200, hub.request("PUT", "/v1/schemas/order", hub.admin(),
                HubFixture.JSON.writeValueAsBytes(Map.of("type", "object", "required", List.of("qty"))), Map.of()));
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
        }
    }

    @BeforeEach
    void family() {
        r = uid("r");
        rToken = hub.createNode(r, null);
        c = uid("c");
        cToken = hub.createNode(c, r);
        c2 = uid("c2");
        hub.createNode(c2, r);
        q = uid("q");
        assertStatus(201, hub.post(hub.admin(), "/v1/nodes", obj("id", q, "kind", "external", "parent", r,
                "labels", Map.of("quarantine", "true"))));
        String s = uid("s");
        hub.createNode(s, null);
        d = uid("d");
        hub.createNode(d, s);
    }

    private static Resp batch(String token, Object... messages) {
        return hub.post(token, BATCH, obj("messages", List.of(messages)));
    }

    private static List<JsonNode> results(Resp answer) {
        assertStatus(200, answer);
        List<JsonNode> out = new ArrayList<>();
        answer.get("results").forEach(out::add);
        return out;
    }

    private static void assertItemError(JsonNode item, int status, String code) {
        assertEquals(code, item.path("error").asText(), () -> "expected " + code + ": " + item);
        assertEquals(status, item.path("httpStatus").asInt(), () -> "expected " + status + ": " + item);
        assertTrue(!item.path("message").asText().isBlank(), () -> "error without message: " + item);
    }

    /** A batch refused whole for its message at {@code index}, which the message names. */
    private static void atItem(int index, Resp answer, int status, String code) {
        assertError(answer, status, code);
        assertTrue(answer.text("message").startsWith("messages[" + index + "]: "), answer::toString);
    }

    /** The audit entries of sends to {@code target}. */
    private List<JsonNode> auditOf(String target) {
        return hub.get(hub.admin(), "/v1/audit?action=send&limit=1000").items().stream()
                .filter(e -> e.path("target").asText().equals(target)).toList();
    }

    @Test
    void aBatchCommitsEveryItemAndStreamsThemInOrder() {
        try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", cToken, null)) {
            stream.expectReady(WAIT);
            Object[] messages = IntStream.range(0, 20).mapToObj(i -> obj("to", i == 7 ? c2 : c, "text", "m" + i))
                    .toArray();
            Resp answer = batch(rToken, messages);
            List<JsonNode> results = results(answer);
            assertEquals(20, results.size());
            assertEquals(20, answer.num("accepted"));
            assertEquals(0, answer.num("duplicates"));
            assertEquals(0, answer.num("refused"));
            List<String> toC = new ArrayList<>();
            long seq = 0;
            for (int i = 0; i < 20; i++) {
                JsonNode item = results.get(i);
                assertEquals(202, item.path("httpStatus").asInt(), item::toString);
                assertEquals("accepted", item.path("status").asText());
                assertTrue(item.path("createdAt").isTextual(), item::toString);
                if (i == 7) {
                    assertEquals(c2, item.path("to").asText());
                    assertEquals(1, item.path("seq").asLong());
                    continue;
                }
                assertEquals(c, item.path("to").asText());
                assertEquals(++seq, item.path("seq").asLong(), "seqs follow the request's order");
                toC.add(item.path("id").asText());
            }
            List<SseClient.Frame> frames = stream.nextEvents(19, WAIT);
            assertEquals(toC, frames.stream().map(f -> f.json().path("id").asText()).toList());
            assertEquals(IntStream.range(0, 20).filter(i -> i != 7).mapToObj(i -> "m" + i).toList(),
                    frames.stream().map(f -> f.json().path("text").asText()).toList());
        }
        // every item's allowance is audited with its envelope, as a single send's is
        List<JsonNode> allowed = auditOf(c);
        assertEquals(19, allowed.stream().filter(e -> e.path("decision").asText().equals("allow")
                && e.path("envelopeId").isTextual()).count());
    }

    @Test
    void largeMessagesPastWhatTheStreamsRingHoldsReachTheStreamWhole() {
        // 8 of 24,000 characters in one commit: the followed inbox's ring keeps the last two
        // (64 Ki characters), so the stream reads the others from the store
        try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", cToken, null)) {
            stream.expectReady(WAIT);
            List<String> texts = IntStream.range(0, 8).mapToObj(i -> Character.toString('a' + i).repeat(24_000))
                    .toList();
            Resp answer = batch(rToken, texts.stream().map(text -> obj("to", c, "text", text)).toArray());
            assertEquals(8, answer.num("accepted"));
            List<SseClient.Frame> frames = stream.nextEvents(8, WAIT);
            assertEquals(texts, frames.stream().map(f -> f.json().path("text").asText()).toList());
        }
    }

    @Test
    void aRepeatedMessageIdAnswersTheFirstWithinAndAcrossBatchesAndSingleSends() {
        List<JsonNode> first = results(batch(rToken, obj("to", c, "text", "one", "messageId", "m-1"),
                obj("to", c, "text", "two", "messageId", "m-2"),
                obj("to", c, "text", "one again", "messageId", "m-1")));
        assertEquals(202, first.get(0).path("httpStatus").asInt());
        assertEquals(202, first.get(1).path("httpStatus").asInt());
        JsonNode repeat = first.get(2);
        assertEquals(200, repeat.path("httpStatus").asInt(), repeat::toString);
        assertTrue(repeat.path("duplicate").asBoolean(), repeat::toString);
        assertEquals(first.get(0).path("id"), repeat.path("id"));
        assertEquals(first.get(0).path("seq"), repeat.path("seq"));

        Resp again = batch(rToken, obj("to", c, "text", "two again", "messageId", "m-2"),
                obj("to", c, "text", "three", "messageId", "m-3"));
        assertEquals(1, again.num("duplicates"));
        assertEquals(1, again.num("accepted"));
        List<JsonNode> second = results(again);
        assertTrue(second.get(0).path("duplicate").asBoolean());
        assertEquals(first.get(1).path("id"), second.get(0).path("id"));
        assertEquals(3, second.get(1).path("seq").asLong());

        Resp single = hub.post(rToken, "/v1/messages", obj("to", c, "text", "three once more", "messageId", "m-3"));
        assertStatus(200, single);
        assertEquals(second.get(1).path("id").asText(), single.text("id"));
        Resp batchAfterSingle = batch(rToken, obj("to", c, "text", "four", "messageId", "m-4"));
        Resp singleAfterBatch = hub.post(rToken, "/v1/messages", obj("to", c, "text", "four again", "messageId", "m-4"));
        assertEquals(results(batchAfterSingle).getFirst().path("id").asText(), singleAfterBatch.text("id"));

        assertEquals(List.of("one", "two", "three", "four"),
                hub.inbox(cToken).stream().map(e -> e.path("text").asText()).toList());
    }

    @Test
    void aRefusedItemFailsByItselfAndTheAllowedOnesCommitTogether() {
        Resp answer = batch(rToken,
                obj("to", c, "text", "fine"),
                obj("to", d, "text", "another group"),
                obj("to", "ghost-" + uid("g"), "text", "nobody"),
                obj("to", c, "from", c2, "text", "forged"),
                obj("to", q, "text", "quarantined"),
                obj("to", c, "kind", "order", "data", Map.of("note", "no qty")),
                obj("to", c, "kind", "order", "data", Map.of("qty", 2)),
                obj("to", c, "from", r, "text", "from myself"));
        List<JsonNode> results = results(answer);
        assertEquals(3, answer.num("accepted"));
        assertEquals(5, answer.num("refused"));
        assertEquals(202, results.get(0).path("httpStatus").asInt());
        assertItemError(results.get(1), 403, "acl_denied");
        assertItemError(results.get(2), 404, "node_not_found");
        assertItemError(results.get(3), 403, "identity_mismatch");
        assertItemError(results.get(4), 403, "acl_denied");
        assertEquals("quarantine", results.get(4).path("rule").asText(), results.get(4)::toString);
        assertItemError(results.get(5), 400, "schema_violation");
        assertEquals(202, results.get(6).path("httpStatus").asInt());
        assertEquals(202, results.get(7).path("httpStatus").asInt());
        assertEquals(List.of(1L, 2L, 3L), List.of(results.get(0).path("seq").asLong(),
                results.get(6).path("seq").asLong(), results.get(7).path("seq").asLong()));

        assertEquals(List.of("message", "order", "message"),
                hub.inbox(cToken).stream().map(e -> e.path("kind").asText()).toList());
        // the refusals are audited as a single send's are, the denials with their reason
        assertEquals(List.of("deny"), auditOf(d).stream().map(e -> e.path("decision").asText()).toList());
        assertEquals(List.of("deny"), auditOf(q).stream().map(e -> e.path("decision").asText()).toList());
        assertEquals("quarantine", auditOf(q).getFirst().path("rule").asText());
        assertTrue(hub.metric("parley_sends_denied_total") >= 3);
    }

    @Test
    void aBodyThatCannotBeReadAsABatchIsRefusedWholeAndWritesNothing() {
        assertError(hub.post(rToken, BATCH, obj("to", c, "text", "a single send")), 400, "invalid_request");
        assertError(hub.post(rToken, BATCH, obj("messages", obj("to", c))), 400, "invalid_request");
        assertError(hub.post(rToken, BATCH, "[{\"to\":\"" + c + "\"}]"), 400, "invalid_request");
        assertError(hub.postRaw(rToken, BATCH, "{\"messages\": [{\"to\": \"" + c + "\"}"), 400, "invalid_request");
        Resp empty = assertError(batch(rToken), 400, "invalid_request");
        assertTrue(empty.text("message").contains("1 to 1000"), empty::toString);
        Resp tooMany = assertError(batch(rToken, Collections.nCopies(1001, obj("to", c, "text", "fine")).toArray()), 400,
                "invalid_request");
        assertTrue(tooMany.text("message").contains("1001"), tooMany::toString);
        Resp missingTo = assertError(batch(rToken, obj("to", c, "text", "fine"), obj("text", "where to?")), 400,
                "invalid_request");
        assertTrue(missingTo.text("message").startsWith("messages[1]: "), missingTo::toString);
        atItem(1, batch(rToken, obj("to", c, "text", "fine"), "not an object"), 400, "invalid_request");
        atItem(1, batch(rToken, obj("to", c, "text", "fine"), obj("to", c, "text", "x", "kind", "Bad Kind")), 400,
                "invalid_request");
        atItem(1, batch(rToken, obj("to", c, "text", "fine"), obj("to", c, "text", "x", "kind", "reply")), 400,
                "invalid_request");
        atItem(1, batch(rToken, obj("to", c, "text", "fine"), obj("to", c, "text", "x", "deliverAt",
                "2099-01-01T00:00:00Z")), 400, "invalid_request");
        assertError(hub.post(rToken, BATCH + "?wait=1000", obj("messages", List.of(obj("to", c, "text", "fine")))), 400,
                "invalid_request");
        Resp tooLarge = assertError(batch(rToken, obj("to", c, "text", "fine"), obj("to", c, "text", "x".repeat(300 * 1024))), 413,
                "payload_too_large");
        assertTrue(tooLarge.text("message").startsWith("messages[1]: "), tooLarge::toString);
        assertError(batch(null, obj("to", c, "text", "fine")), 401, "unauthorized");
        assertEquals(List.of(), hub.inbox(cToken), "nothing of a refused batch is written");
    }

    @Test
    void aBatchOverTheBodyLimitIsRefusedBeforeItIsRead(@TempDir Path own) {
        try (HubFixture small = HubFixture.start(own, config -> config.withMaxBodyBytes(1024))) {
            String lead = small.createNode("lead", null);
            String w1 = small.createNode("w1", "lead");
            Object[] fits = IntStream.range(0, 20).mapToObj(i -> obj("to", "w1", "text", "x".repeat(500))).toArray();
            assertEquals(20, small.post(lead, BATCH, obj("messages", List.of(fits))).num("accepted"),
                    "a batch may be 16 times the body limit");
            Object[] over = IntStream.range(0, 40).mapToObj(i -> obj("to", "w1", "text", "x".repeat(500))).toArray();
            assertError(small.post(lead, BATCH, obj("messages", List.of(over))), 413, "payload_too_large");
            assertEquals(20, small.inbox(w1).size(), "the refused batch wrote nothing");
        }
    }

    @Test
    void eachMessageTakesATokenAndThoseOverTheRateAreRefusedByThemselves(@TempDir Path own) {
        AtomicLong ticker = new AtomicLong(); // held still: buckets refill only when the test moves it
        try (HubFixture limited = HubFixture.start(own, config -> config.withNodeRate(1, 5), ticker::get)) {
            String lead = limited.createNode("lead", null);
            String w1 = limited.createNode("w1", "lead");
            Object[] eight = IntStream.range(0, 8).mapToObj(i -> obj("to", "w1", "text", "m" + i)).toArray();
            Resp answer = limited.post(lead, BATCH, obj("messages", List.of(eight)));
            assertEquals(5, answer.num("accepted"));
            assertEquals(3, answer.num("refused"));
            List<JsonNode> results = results(answer);
            for (int i = 5; i < 8; i++) {
                assertItemError(results.get(i), 429, "rate_limited");
                assertTrue(results.get(i).path("retryAfter").asLong() >= 1, results.get(i)::toString);
            }
            assertEquals(List.of("m0", "m1", "m2", "m3", "m4"),
                    limited.inbox(w1).stream().map(e -> e.path("text").asText()).toList());
            assertError(limited.post(lead, BATCH, obj("messages", List.of(obj("to", "w1", "text", "late")))), 429, "rate_limited");
        }
    }
}
