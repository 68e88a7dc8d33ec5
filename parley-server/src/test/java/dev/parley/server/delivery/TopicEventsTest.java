package dev.parley.server.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.SseClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Topic subscriptions and events over HTTP, against a real hub. */
class TopicEventsTest {
    @TempDir
    Path dir;
    private HubFixture hub;

    @BeforeEach
    void start() {
        hub = HubFixture.start(dir);
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    @Test
    void aNodeSubscribesOnceLeavesAndOnlyTheAdminListsSubscribers() {
        hub.createNode("lead", null);
        String w1 = hub.createNode("w1", "lead");

        JsonNode first = assertStatus(201, hub.post(w1, "/v1/topics/builds/subscriptions", null)).json();
        assertEquals("builds", first.get("topic").asText());
        assertEquals("w1", first.get("node").asText());
        assertEquals(first, assertStatus(200, hub.post(w1, "/v1/topics/builds/subscriptions", null)).json());

        var listed = assertStatus(200, hub.get(hub.admin(), "/v1/topics/builds/subscriptions"));
        assertEquals(List.of(first), listed.items());
        assertError(hub.get(w1, "/v1/topics/builds/subscriptions"), 403, "forbidden");
        assertError(hub.post(hub.admin(), "/v1/topics/builds/subscriptions", null), 403, "forbidden");
        assertError(hub.post(null, "/v1/topics/builds/subscriptions", null), 401, "unauthorized");

        assertStatus(204, hub.delete(w1, "/v1/topics/builds/subscriptions"));
        assertError(hub.delete(w1, "/v1/topics/builds/subscriptions"), 404, "not_subscribed");
        assertTrue(hub.get(hub.admin(), "/v1/topics/builds/subscriptions").items().isEmpty());
    }

    @Test
    void anEventReachesEverySubscriberOfTheGroupButNotItsPublisher() {
        String lead = hub.createNode("lead", null);
        String w1 = hub.createNode("w1", "lead");
        String w2 = hub.createNode("w2", "lead");
        for (String token : List.of(lead, w1, w2)) {
            assertStatus(201, hub.post(token, "/v1/topics/builds/subscriptions", null));
        }

        var published = assertStatus(202, hub.post(w1, "/v1/topics/builds/events", obj("text", "green",
                "data", Map.of("n", 1), "meta", Map.of("k", "v"), "threadId", "t-1")));
        assertEquals(2, published.num("delivered"));

        for (String receiver : List.of("lead", "w2")) {
            List<JsonNode> inbox = inboxOf(receiver);
            assertEquals(1, inbox.size());
            JsonNode event = inbox.getFirst();
            assertEquals("event", event.get("kind").asText());
            assertEquals("builds", event.get("topic").asText());
            assertEquals("w1", event.get("from").asText());
            assertEquals(published.text("id"), event.get("corrId").asText());
            assertEquals("green", event.get("text").asText());
            assertEquals(1, event.get("data").get("n").asInt());
            assertEquals("v", event.get("meta").get("k").asText());
            assertEquals("t-1", event.get("threadId").asText());
            assertEquals("topic", event.get("trace").get("route").asText());
        }
        assertTrue(inboxOf("w1").isEmpty(), "the publisher does not receive its own event");
        assertEquals(1, hub.metric("parley_topic_events_total"));
    }

    @Test
    void aSubscriberInAnotherGroupReceivesOnlyWithATopicGrant() {
        hub.createNode("alpha", null);
        String a1 = hub.createNode("a1", "alpha");
        hub.createNode("beta", null);
        String b1 = hub.createNode("b1", "beta");
        assertStatus(201, hub.post(b1, "/v1/topics/news/subscriptions", null));

        assertEquals(0, assertStatus(202, hub.post(a1, "/v1/topics/news/events", obj("text", "one"))).num("delivered"));
        assertTrue(inboxOf("b1").isEmpty());
        List<JsonNode> denials = hub.get(hub.admin(), "/v1/audit?node=a1&decision=deny").items();
        assertEquals(1, denials.size());
        assertEquals("topic.publish", denials.getFirst().get("action").asText());
        assertEquals("b1", denials.getFirst().get("target").asText());
        assertTrue(denials.getFirst().get("reason").asText().contains("topic:news"));

        assertStatus(201, hub.post(hub.admin(), "/v1/grants", obj("from", "a1", "to", "topic:news")));
        assertEquals(1, assertStatus(202, hub.post(a1, "/v1/topics/news/events", obj("text", "two"))).num("delivered"));
        List<JsonNode> inbox = inboxOf("b1");
        assertEquals(1, inbox.size());
        assertEquals("two", inbox.getFirst().get("text").asText());
        assertEquals(1, inbox.getFirst().get("seq").asLong());
    }

    @Test
    void badTopicNamesAndPublishersAreRefusedAndNothingIsDelivered() {
        hub.createNode("lead", null);
        String w1 = hub.createNode("w1", "lead");
        String w2 = hub.createNode("w2", "lead");
        assertStatus(201, hub.post(w2, "/v1/topics/ok/subscriptions", null));

        for (String bad : List.of("Bad", "-leading", "has%20space", "a".repeat(129), "under_score!")) {
            assertError(hub.post(w1, "/v1/topics/" + bad + "/events", obj("text", "x")), 400, "invalid_topic");
            assertError(hub.post(w1, "/v1/topics/" + bad + "/subscriptions", null), 400, "invalid_topic");
        }
        assertError(hub.post(hub.admin(), "/v1/topics/ok/events", obj("text", "x")), 403, "forbidden");
        assertError(hub.post(w1, "/v1/topics/ok/events", obj("meta", Map.of())), 400, "invalid_request");
        assertError(hub.post(w1, "/v1/topics/ok/events", obj("text", 5)), 400, "invalid_request");
        assertError(hub.postRaw(w1, "/v1/topics/ok/events", "{not json"), 400, "invalid_request");
        assertError(hub.post(null, "/v1/topics/ok/events", obj("text", "x")), 401, "unauthorized");

        assertTrue(inboxOf("w2").isEmpty());
        assertEquals(0, hub.metric("parley_topic_events_total"));
    }

    @Test
    void aSubscribersOpenStreamHearsTheEventOnceCommitted() {
        hub.createNode("lead", null);
        String w1 = hub.createNode("w1", "lead");
        String w2 = hub.createNode("w2", "lead");
        assertStatus(201, hub.post(w2, "/v1/topics/live/subscriptions", null));

        try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", w2, null)) {
            stream.expectReady(Duration.ofSeconds(5));
            String id = assertStatus(202, hub.post(w1, "/v1/topics/live/events", obj("text", "now"))).text("id");
            SseClient.Frame frame = stream.nextEvent(Duration.ofSeconds(5));
            assertEquals("event", frame.event());
            assertEquals(id, frame.json().get("corrId").asText());
            assertEquals("live", frame.json().get("topic").asText());
        }
    }

    private List<JsonNode> inboxOf(String node) {
        return hub.inboxAll(hub.admin(), "/v1/nodes/" + node + "/inbox");
    }
}
