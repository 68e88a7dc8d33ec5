package dev.parley.server.federation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.nats.GatewayConfig;
import dev.parley.nats.auth.AuthorityFile;
import dev.parley.nats.auth.GatewayId;
import dev.parley.nats.auth.NatsAuthority;
import dev.parley.nats.auth.StateRoomBuckets;
import dev.parley.nats.testing.NatsServer;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import dev.parley.server.keys.KeyFileSealer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Joining a federation by invite, on a real nats-server that trusts only the federation's
 * operator: gateway a holds the authority (sealed in its data directory, as `parley gateway
 * init` leaves it); its admin invites gateway b; b's operator trades the invite, once, for b's
 * NATS credentials and starts b with them; b then takes part like any gateway.
 */
class GatewayJoinTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    @BeforeEach
    void needsNatsServer() {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
    }

    private Path secretFile(String name, String text) throws IOException {
        Path file = tmp.resolve(name);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        return Files.writeString(file, text);
    }

    private HubFixture gateway(String id, Path data, Path creds, NatsServer nats) {
        return HubFixture.start(data, c -> c.withGateway(Optional.of(new GatewayConfig(id, nats.url(),
                Optional.of(creds)))));
    }

    @Test
    void anInvitedGatewayJoinsWithCredentialsFromTheExchangeAndTheInviteWorksOnce() throws Exception {
        NatsAuthority authority = NatsAuthority.create();
        Path dataA = tmp.resolve("hub-a");
        Files.createDirectories(dataA);
        AuthorityFile.create(dataA, KeyFileSealer.open(dataA), authority);
        Path aCreds = secretFile("a.creds", authority.mint(new GatewayId("a"), StateRoomBuckets.DEFAULT).creds());
        try (NatsServer nats = NatsServer.start(tmp.resolve("nats"), authority::serverConfig);
             HubFixture a = gateway("a", dataA, aCreds, nats)) {
            String lead = a.createNode("lead", null);
            assertError(a.post(lead, "/v1/gateways/invites", obj("gateway", "b")), 403, "forbidden");
            assertError(a.post(null, "/v1/gateways/invites", obj("gateway", "b")), 401, "unauthorized");
            assertError(a.post(a.admin(), "/v1/gateways/invites", obj("gateway", "B.1")), 400, "invalid_request");
            assertError(a.post(a.admin(), "/v1/gateways/invites", obj("gateway", "b", "ttlSeconds", 5)), 400,
                    "invalid_request");
            assertError(a.post(a.admin(), "/v1/gateways/invites", obj()), 400, "invalid_request");

            Resp invited = a.post(a.admin(), "/v1/gateways/invites", obj("gateway", "b", "ttlSeconds", 600));
            assertEquals(201, invited.status(), invited::toString);
            assertEquals("b", invited.text("gateway"));
            String token = invited.text("inviteToken");
            assertTrue(token.startsWith("pg_"), token);

            assertError(a.post(null, "/v1/auth/gateway", obj("inviteToken", "pg_" + "x".repeat(43))), 401,
                    "invalid_token");
            assertError(a.post(null, "/v1/auth/gateway", obj("inviteToken", "pi_not-a-gateway-invite")), 401,
                    "invalid_token");
            Resp joined = a.post(null, "/v1/auth/gateway", obj("inviteToken", token));
            assertEquals(200, joined.status(), joined::toString);
            assertEquals("b", joined.text("gateway"));
            String creds = joined.text("creds");
            assertTrue(creds.contains("BEGIN NATS USER JWT") && creds.contains("BEGIN USER NKEY SEED"), "a .creds file");
            assertError(a.post(null, "/v1/auth/gateway", obj("inviteToken", token)), 409, "token_already_used");

            // every decision is in a's audit log: the invite, the exchange that minted b's user, the refusals
            List<String> audit = a.get(a.admin(), "/v1/audit?limit=1000").items().stream()
                    .map(JsonNode::toString).toList();
            assertTrue(audit.stream().anyMatch(e -> e.contains("\"gateway.invite\"") && e.contains("\"allow\"")), 
                    audit::toString);
            assertTrue(audit.stream().anyMatch(e -> e.contains("\"auth.gateway\"") && e.contains("\"allow\"")
                    && e.contains(joined.text("user"))), audit::toString);
            await().atMost(WAIT).until(() -> a.get(a.admin(), "/v1/audit?action=auth.gateway&limit=100").items()
                    .stream().filter(e -> "deny".equals(e.path("decision").asText())).count() == 3);
            assertFalse(audit.stream().anyMatch(e -> e.contains("BEGIN USER NKEY SEED")), "no seed in the audit log");

            // b starts on what the exchange gave it and takes part like any gateway
            try (HubFixture b = gateway("b", tmp.resolve("hub-b"), secretFile("b.creds", creds), nats)) {
                await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
                String worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
                await().atMost(WAIT).until(() -> "b".equals(a.get(a.admin(), "/v1/nodes/worker").text("gateway")));
                String id = a.sendOk(lead, "worker", "welcome").text("id");
                await().atMost(WAIT).until(() -> b.inbox(worker).stream().anyMatch(e -> id.equals(e.get("id").asText())));
                assertFalse(nats.log().contains("Violation"), nats::log);

                // b holds no authority: it cannot admit gateways
                assertError(b.post(b.admin(), "/v1/gateways/invites", obj("gateway", "c")), 409, "no_nats_authority");
            }
        }
    }

    @Test
    void aSingleHostHubAdmitsNoGateway() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("single"))) {
            Resp r = assertError(hub.post(hub.admin(), "/v1/gateways/invites", obj("gateway", "b")), 409,
                    "no_nats_authority");
            assertTrue(r.text("message").contains("parley gateway init"), r::toString);
            assertError(hub.post(null, "/v1/auth/gateway", obj("inviteToken", "pg_x")), 409, "no_nats_authority");
        }
    }
}
