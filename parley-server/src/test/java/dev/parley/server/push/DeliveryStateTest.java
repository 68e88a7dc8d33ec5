package dev.parley.server.push;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.SseClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GET /v1/nodes/{id}/delivery}'s {@code live} part over HTTP: a webhook to a closed port
 * shows as failing with its envelope waiting for the next attempt, an open inbox stream shows as
 * open (and no longer once it ended), and neither shows to a node that may not read the
 * delivery settings (its parent either).
 */
class DeliveryStateTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void aWebhookToAClosedPortShowsFailingWithItsNextAttempt() throws IOException {
        try (HubFixture hub = HubFixture.start(dir)) {
            String lead = hub.createNode("lead", null);
            String hooked = hub.createNode("hooked", "lead");
            // the backoff is long, so the envelope is seen waiting for its second attempt
            HubFixture.Resp put = hub.put(hub.admin(), "/v1/nodes/hooked/delivery", obj(
                    "webhook", obj("url", "http://127.0.0.1:" + closedPort() + "/hook", "secret", WebhookReceiver.SECRET),
                    "retry", obj("maxAttempts", 5, "baseMs", 600_000, "capMs", 600_000)));
            assertEquals(200, put.status(), put::toString);
            JsonNode before = hub.get(hub.admin(), "/v1/nodes/hooked/delivery").json().get("live");
            assertFalse(before.get("failing").asBoolean(), before::toString);
            assertEquals(0, before.get("pushesWaiting").asLong(), before::toString);
            assertTrue(before.get("nextAttemptAt").isNull(), before::toString);

            Instant sent = Instant.now();
            String id = hub.sendOk(lead, "hooked", "to a dead endpoint").text("id");
            // the failed attempt is committed with its retry: from then on the webhook shows failing, its retry due
            await().atMost(WAIT).until(() -> "retry_pending".equals(hub.status(lead, id).text("state")));
            JsonNode live = hub.get(hooked, "/v1/nodes/hooked/delivery").json().get("live");
            assertTrue(live.get("failing").asBoolean(), live::toString);
            assertTrue(live.get("failedAttempts").asInt() >= 1, live::toString);
            assertTrue(live.get("lastError").asText().startsWith("cannot connect to 127.0.0.1"), live::toString);
            assertFalse(live.toString().contains("Exception"), () -> "in the user's words: " + live);
            Instant since = Instant.parse(live.get("failingSince").asText());
            assertFalse(since.isBefore(sent.minusSeconds(1)), live::toString);
            assertEquals(1, live.get("pushesWaiting").asLong(), live::toString);
            assertFalse(Instant.parse(live.get("nextAttemptAt").asText()).isBefore(since), live::toString);
            assertError(hub.get(lead, "/v1/nodes/hooked/delivery"), 403, "forbidden"); // the admin's or its own
        }
    }

    @Test
    void anOpenStreamShowsAsOpenAndNoLongerOnceTheHubFindsItGone() {
        // heartbeats often: a write to the closed connection fails soon, which ends the stream
        try (HubFixture hub = HubFixture.start(dir, config -> config.withHeartbeat(Duration.ofMillis(100)))) {
            String reader = hub.createNode("reader", null);
            assertEquals(0, hub.get(reader, "/v1/nodes/reader/delivery").json().at("/live/streams").asInt());
            try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", reader, null)) {
                stream.expectReady(WAIT);
                JsonNode live = hub.get(reader, "/v1/nodes/reader/delivery").json().get("live");
                assertEquals(1, live.get("streams").asInt(), live::toString);
                assertFalse(live.get("failing").asBoolean(), "no webhook, nothing failing: " + live);
            }
            await().atMost(WAIT).until(() -> hub.get(hub.admin(), "/v1/nodes/reader/delivery").json()
                    .at("/live/streams").asInt() == 0);
        }
    }

    /** A port nothing listens on: bound, then closed again. */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
