package dev.parley.server.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.SseClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RedeliveryAndReplyTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    /** How many times the hub redelivered {@code id}, as its timeline tells. */
    private static long redeliveries(HubFixture hub, String token, String id) {
        long n = 0;
        for (JsonNode step : hub.status(token, id).get("timeline")) {
            if (step.path("detail").asText().contains("redelivering as attempt")) {
                n++;
            }
        }
        return n;
    }

    private static void setDelivery(HubFixture hub, String node, String json) {
        var put = hub.request("PUT", "/v1/nodes/" + node + "/delivery", hub.admin(), json.getBytes(), Map.of());
        assertEquals(200, put.status(), put::toString);
    }

    /** A lead and its worker child, as each test here needs them. */
    private record Family(String leadToken, String worker, String workerToken) {
        static Family of(HubFixture hub) {
            String lead = uid("lead");
            String worker = uid("worker");
            String leadToken = hub.createNode(lead, null);
            return new Family(leadToken, worker, hub.createNode(worker, lead));
        }
    }

    @Test
    void aStreamReaderThatNeverAcksGetsTheSameEnvelopeAgainUntilItAcks() {
        try (HubFixture hub = HubFixture.start(dir)) {
            Family f = Family.of(hub);
            setDelivery(hub, f.worker(), "{\"redeliverAfterMs\":300,\"retry\":{\"maxAttempts\":5}}");
            String id = hub.sendOk(f.leadToken(), f.worker(), "please ack").text("id");

            try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", f.workerToken(), null)) {
                stream.expectReady(WAIT);
                SseClient.Frame first = stream.nextEvent(WAIT);
                assertEquals("1", first.id());
                assertEquals(1, first.json().get("trace").get("attempt").asInt());
                SseClient.Frame again = stream.nextEvent(WAIT);
                assertEquals(id, again.json().get("id").asText(), "the same envelope comes again");
                assertEquals(2, again.json().get("trace").get("attempt").asInt());
                assertNull(again.id(), "a redelivery must not move the client's cursor");

                assertEquals(200, hub.post(f.workerToken(), "/v1/messages/" + id + "/ack", obj("status", "processed")).status());
                // A redelivery committed just before the ack may still be on its way; the
                // timeline, read once the ack is in, counts every one the hub made. The next
                // envelope, never acked, comes again once its own wait is over, which ends after
                // any redelivery of the acked one would have been due: the dispatcher works its
                // schedule in due order, so by then it has looked at the acked one and let it be.
                long redeliveries = redeliveries(hub, f.leadToken(), id);
                String nextId = hub.sendOk(f.leadToken(), f.worker(), "next one").text("id");
                boolean movedOn = false;
                while (true) {
                    SseClient.Frame frame = stream.nextEvent(WAIT);
                    int attempt = frame.json().get("trace").get("attempt").asInt();
                    if (frame.json().get("id").asText().equals(id)) {
                        assertTrue(attempt <= 1 + redeliveries, "redelivered after the ack: " + frame.data());
                    } else if (!movedOn) {
                        movedOn = true;
                        assertEquals("2", frame.id(), "after the ack the stream moves on: " + frame.data());
                    } else {
                        assertEquals(nextId, frame.json().get("id").asText(), frame.data());
                        assertEquals(2, attempt, "the next one, again: " + frame.data());
                        break;
                    }
                }
                assertEquals(redeliveries, redeliveries(hub, f.leadToken(), id), "no redelivery after the ack");
            }
            assertEquals("processed", hub.status(f.leadToken(), id).text("state"));
        }
    }

    @Test
    void eachStreamOfTheNodeGetsTheRedeliveryWhicheverTakesItFirst() {
        try (HubFixture hub = HubFixture.start(dir)) {
            Family f = Family.of(hub);
            setDelivery(hub, f.worker(), "{\"redeliverAfterMs\":300,\"retry\":{\"maxAttempts\":5}}");
            try (SseClient one = SseClient.open(hub, "/v1/inbox/stream", f.workerToken(), null);
                 SseClient two = SseClient.open(hub, "/v1/inbox/stream", f.workerToken(), null)) {
                one.expectReady(WAIT);
                two.expectReady(WAIT);
                String id = hub.sendOk(f.leadToken(), f.worker(), "please ack").text("id");
                for (SseClient stream : List.of(one, two)) {
                    assertEquals(1, stream.nextEvent(WAIT).json().get("trace").get("attempt").asInt());
                }
                // the feed lets a redelivery go once every stream of the node has taken it, not at the first
                for (SseClient stream : List.of(one, two)) {
                    SseClient.Frame again = stream.nextEvent(WAIT);
                    assertEquals(id, again.json().get("id").asText());
                    assertEquals(2, again.json().get("trace").get("attempt").asInt());
                }
                assertEquals(200, hub.post(f.workerToken(), "/v1/messages/" + id + "/ack", obj("status", "processed"))
                        .status());
            }
        }
    }

    @Test
    void anEnvelopeNeverAckedIsDeadLetteredAfterTheLastDelivery() {
        try (HubFixture hub = HubFixture.start(dir)) {
            Family f = Family.of(hub);
            setDelivery(hub, f.worker(), "{\"redeliverAfterMs\":200,\"retry\":{\"maxAttempts\":2}}");
            String id = hub.sendOk(f.leadToken(), f.worker(), "ignored").text("id");
            try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", f.workerToken(), null)) {
                stream.expectReady(WAIT);
                assertEquals(1, stream.nextEvent(WAIT).json().get("trace").get("attempt").asInt());
                assertEquals(2, stream.nextEvent(WAIT).json().get("trace").get("attempt").asInt());
                await().atMost(WAIT).until(() -> "dead_lettered".equals(hub.status(f.leadToken(), id).text("state")));
            }
            assertTrue(hub.inbox(f.leadToken()).stream().anyMatch(e -> e.get("kind").asText().equals("dead_letter")
                    && e.get("corrId").asText().equals(id)));
        }
    }

    @Test
    void waitHoldsTheSendUntilTheReplyOrAnswers504() throws Exception {
        try (HubFixture hub = HubFixture.start(dir)) {
            Family f = Family.of(hub);

            CompletableFuture<HubFixture.Resp> asking = CompletableFuture.supplyAsync(() ->
                    hub.post(f.leadToken(), "/v1/messages?wait=10000", obj("to", f.worker(), "text", "2+2?", "requiresReply", true)));
            JsonNode question = await().atMost(WAIT).until(() -> hub.inbox(f.workerToken()).stream().findFirst(),
                    Optional::isPresent).get();
            assertEquals(202, hub.post(f.workerToken(), "/v1/messages/" + question.get("id").asText() + "/reply",
                    obj("text", "4")).status());
            HubFixture.Resp answered = asking.get();
            assertEquals(200, answered.status(), answered::toString);
            assertEquals(question.get("id").asText(), answered.get("request").get("id").asText());
            assertEquals("4", answered.get("reply").get("text").asText());
            assertEquals(question.get("id").asText(), answered.get("reply").get("corrId").asText());

            HubFixture.Resp silent = hub.post(f.leadToken(), "/v1/messages?wait=300",
                    obj("to", f.worker(), "text", "anyone?", "requiresReply", true));
            assertError(silent, 504, "reply_timeout");
            assertEquals("accepted", hub.status(f.leadToken(), silent.text("id")).text("state"), "the request stays accepted");

            assertError(hub.post(f.leadToken(), "/v1/messages?wait=300", obj("to", f.worker(), "text", "x")), 400, "invalid_request");
            assertError(hub.post(f.leadToken(), "/v1/messages?wait=soon",
                    obj("to", f.worker(), "text", "x", "requiresReply", true)), 400, "invalid_request");
        }
    }

    @Test
    void aMissedReplyDeadlineRaisesAnIncidentToTheSender() {
        try (HubFixture hub = HubFixture.start(dir)) {
            Family f = Family.of(hub);
            String late = hub.post(f.leadToken(), "/v1/messages", obj("to", f.worker(), "text", "quick!", "replyWithinMs", 300))
                    .text("id");
            String answered = hub.post(f.leadToken(), "/v1/messages", obj("to", f.worker(), "text", "also quick",
                    "replyWithinMs", 1500)).text("id");
            assertEquals(202, hub.post(f.workerToken(), "/v1/messages/" + answered + "/reply", obj("text", "done")).status());

            await().atMost(WAIT).until(() -> "incident".equals(hub.status(f.leadToken(), late).text("state")));
            JsonNode incident = hub.inbox(f.leadToken()).stream().filter(e -> e.get("kind").asText().equals("incident"))
                    .findFirst().orElseThrow();
            assertEquals(late, incident.get("corrId").asText());
            assertEquals("system", incident.get("trace").get("route").asText());
            // Past the second deadline the replied request must still have raised nothing. A
            // witness, sent later with a longer window, is due after it; the dispatcher works its
            // schedule in due order, so once the witness's incident is in, the replied request's
            // deadline has been looked at.
            String witness = hub.post(f.leadToken(), "/v1/messages", obj("to", f.worker(), "text", "witness",
                    "replyWithinMs", 2000)).text("id");
            await().atMost(WAIT).until(() -> "incident".equals(hub.status(f.leadToken(), witness).text("state")));
            assertEquals(List.of(late, witness), hub.inbox(f.leadToken()).stream()
                    .filter(e -> e.get("kind").asText().equals("incident")).map(e -> e.get("corrId").asText()).toList());
            assertEquals("replied", hub.status(f.leadToken(), answered).text("state"));
            assertError(hub.post(f.leadToken(), "/v1/messages", obj("to", f.worker(), "text", "x", "replyWithinMs", 0)),
                    400, "invalid_request");
        }
    }
}
