package dev.parley.server.federation;

import dev.parley.nats.GatewayConfig;
import dev.parley.nats.testing.NatsServer;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.SmallDisk;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A gateway whose disk is full claims a node id in the state room and then cannot commit the
 * node: the create answers 507. The id stays this gateway's (other gateways may have mirrored
 * the claim, and refuse the id), and once space is back the same create here takes the claim
 * up and succeeds; a create with other details is told how the claim was made.
 */
class GatewayStorageFullTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private static HubFixture gateway(String id, Path data, NatsServer nats) {
        return HubFixture.start(data, c -> c.withGateway(Optional.of(new GatewayConfig(id, nats.url(), Optional.empty()))));
    }

    @Test
    void aCreateThatFailedOnAFullDiskAfterItsClaimSucceedsWhenSpaceReturns() throws Exception {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
        try (SmallDisk disk = SmallDisk.mount(tmp)) {
            try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
                 HubFixture a = gateway("a", disk.resolve("data"), nats);
                 HubFixture b = gateway("b", tmp.resolve("hub-b"), nats)) {
                String lead = a.createNode("lead", null);
                Path filler = disk.fill();
                String refused = null;
                for (int i = 0; i < 1_000 && refused == null; i++) { // pages the WAL already has may take a few
                    HubFixture.Resp r = a.post(a.admin(), "/v1/nodes", obj("id", "late-" + i, "parent", "lead"));
                    if (r.status() != 201) {
                        assertError(r, 507, "storage_full");
                        refused = "late-" + i;
                    }
                }
                assertNotNull(refused, "the full disk refused no create");
                String id = refused;

                // the claim stands in the state room: b mirrors the node as a's and refuses the id
                await().atMost(WAIT).until(() -> "a".equals(b.get(b.admin(), "/v1/nodes/" + id).text("gateway")));
                assertError(b.post(b.admin(), "/v1/nodes", obj("id", id)), 409, "node_exists");

                Files.delete(filler);
                await().atMost(WAIT).until(() -> a.get(null, "/healthz").status() == 200);
                HubFixture.Resp other = assertError(a.post(a.admin(), "/v1/nodes", obj("id", id)), 409, "node_exists");
                assertTrue(other.text("message").contains("create it as then"), other::toString);
                HubFixture.Resp created = a.post(a.admin(), "/v1/nodes", obj("id", id, "parent", "lead"));
                assertEquals(201, created.status(), created::toString);
                assertError(a.post(a.admin(), "/v1/nodes", obj("id", id, "parent", "lead")), 409, "node_exists");

                // and the node works across gateways: lead (on a) reaches it, b's admin sees it as a's
                String token = created.text("token");
                a.sendOk(lead, id, "welcome");
                assertTrue(a.inbox(token).stream().anyMatch(e -> "welcome".equals(e.get("text").asText())));
                assertEquals("a", b.get(b.admin(), "/v1/nodes/" + id).text("gateway"));
            }
        }
    }
}
