package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a hub commits survives a restart on the same data directory; close ends streams cleanly. */
class HubRestartTest {
    static final Duration WAIT = Duration.ofSeconds(5);

    @TempDir
    Path dataDir;

    /**
     * Many streams at once, so that a stop which closed the listener as soon as it had told the
     * streams to end would cut some of them before their last chunk (it did).
     */
    @Test
    void closeLetsEveryOneOfManyStreamsWriteItsEnd() {
        HubFixture hub = HubFixture.start(dataDir);
        List<SseClient> streams = new java.util.ArrayList<>();
        try {
            String token = hub.createNode(uid("many"), null);
            for (int i = 0; i < 64; i++) {
                SseClient stream = SseClient.open(hub, "/v1/inbox/stream", token, "0");
                stream.expectReady(WAIT);
                streams.add(stream);
            }
            hub.close();
            hub = null;
            for (SseClient stream : streams) {
                stream.drainUntilEnd(WAIT);
                assertNull(stream.end().cause(), "close must end every stream cleanly, got " + stream.end().cause());
            }
        } finally {
            streams.forEach(SseClient::close);
            if (hub != null) {
                hub.close();
            }
        }
    }

    @Test
    void stateSurvivesARestartAndCloseEndsStreamsCleanly() {
        String admin;
        String a = uid("rs-a");
        String b = uid("rs-b");
        String aToken;
        String bToken;
        Resp first;
        String grantId;
        HubFixture one = HubFixture.start(dataDir);
        try {
            assertTrue(one.hub().adminTokenCreated());
            admin = one.admin();
            aToken = one.createNode(a, null);
            bToken = one.createNode(b, a);
            first = assertStatus(202, one.post(aToken, "/v1/messages", obj("to", b, "text", "m1", "messageId", "k-1")));
            one.sendOk(aToken, b, "m2");
            one.sendOk(aToken, b, "m3");
            assertStatus(200, one.post(bToken, "/v1/messages/" + first.text("id") + "/ack", obj("status", "processed")));
            String x = uid("rs-x");
            one.createNode(x, null);
            grantId = assertStatus(201, one.post(admin, "/v1/grants", obj("from", a, "to", x))).text("id");

            SseClient stream = SseClient.open(one, "/v1/inbox/stream", bToken, "3");
            stream.expectReady(WAIT);
            one.close();
            one = null;
            stream.drainUntilEnd(WAIT);
            assertNull(stream.end().cause(), "close must end streams cleanly, got " + stream.end().cause());
            stream.close();
        } finally {
            if (one != null) {
                one.close();
            }
        }

        try (HubFixture two = HubFixture.start(dataDir)) {
            assertFalse(two.hub().adminTokenCreated(), "the stored admin token must be reused");
            assertEquals(admin, two.admin());
            assertStatus(200, two.get(aToken, "/v1/nodes/" + a));
            List<JsonNode> inbox = two.inbox(bToken);
            assertEquals(List.of("m1", "m2", "m3"), inbox.stream().map(e -> e.get("text").asText()).toList());
            assertEquals(4, two.sendOk(aToken, b, "m4").num("seq"), "seq continues after a restart");

            Resp again = two.post(aToken, "/v1/messages", obj("to", b, "text", "m1", "messageId", "k-1"));
            assertStatus(200, again);
            assertTrue(again.json().path("duplicate").asBoolean(false), "idempotency must survive a restart");
            assertEquals(first.text("id"), again.text("id"));
            assertEquals("processed", two.status(aToken, first.text("id")).text("state"));
            assertTrue(two.get(admin, "/v1/grants").items().stream()
                    .anyMatch(g -> grantId.equals(g.get("id").asText())), "grants must survive a restart");
            assertTrue(two.get(admin, "/v1/audit?node=" + a).items().stream()
                    .anyMatch(it -> first.text("id").equals(it.path("envelopeId").asText())), "audit must persist");
        }

        String override = "pa_override-" + uid("tok");
        try (HubFixture three = HubFixture.start(dataDir, c -> c.withAdminToken(Optional.of(override)))) {
            assertEquals(override, three.admin());
            assertStatus(200, three.get(override, "/v1/nodes"));
            assertTrue(three.get(override, "/v1/nodes").items().stream().anyMatch(n -> a.equals(n.get("id").asText())));
            assertError(three.get(null, "/v1/nodes"), 401, "unauthorized");
        }
    }
}
