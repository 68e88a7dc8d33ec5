package dev.parley.server.federation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.nats.GatewayConfig;
import dev.parley.nats.auth.GatewayCredentials;
import dev.parley.nats.auth.GatewayId;
import dev.parley.nats.auth.NatsAuthority;
import dev.parley.nats.auth.StateRoomBuckets;
import dev.parley.nats.testing.GatewayConnection;
import dev.parley.nats.testing.NatsServer;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.SseClient;
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

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Gateways in production set-up: a real nats-server that trusts only Parley's operator
 * ({@link NatsAuthority#serverConfig}, MEMORY resolver), each gateway hub connecting with the
 * {@code .creds} file minted for its id. The whole federation path runs without one permission
 * violation, and NATS itself refuses a gateway that writes into another's outbox.
 */
class FederationCredentialsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final NatsAuthority authority = NatsAuthority.create();

    @TempDir
    Path tmp;

    @BeforeEach
    void needsNatsServer() {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
    }

    /** The .creds file for {@code gateway}, readable by its owner only, as an operator would hand it over. */
    private Path credsFile(GatewayCredentials credentials) throws IOException {
        Path file = tmp.resolve(credentials.gateway() + "-" + credentials.userPublicKey() + ".creds");
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        return Files.writeString(file, credentials.creds());
    }

    private HubFixture gateway(String id, Path creds, NatsServer nats) {
        return HubFixture.start(tmp.resolve("hub-" + id), c -> c.withGateway(
                Optional.of(new GatewayConfig(id, nats.url(), Optional.of(creds)))));
    }

    @Test
    void gatewaysOnMintedCredentialsSendReplyResumeAndCannotWriteEachOthersOutbox() throws Exception {
        GatewayCredentials aCreds = authority.mint(new GatewayId("a"), StateRoomBuckets.DEFAULT);
        GatewayCredentials bCreds = authority.mint(new GatewayId("b"), StateRoomBuckets.DEFAULT);
        Path aFile = credsFile(aCreds);
        Path bFile = credsFile(bCreds);
        try (NatsServer nats = NatsServer.start(tmp.resolve("nats"), authority::serverConfig);
             HubFixture a = gateway("a", aFile, nats)) {
            String lead = a.createNode("lead", null);
            String worker;
            String first;
            try (HubFixture b = gateway("b", bFile, nats)) {
                await().atMost(WAIT).until(() -> b.get(b.admin(), "/v1/nodes/lead").status() == 200);
                worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
                await().atMost(WAIT).until(() -> "b".equals(a.get(a.admin(), "/v1/nodes/worker").text("gateway")));

                try (SseClient stream = SseClient.open(b, "/v1/inbox/stream", worker, null)) {
                    HubFixture.Resp sent = a.sendOk(lead, "worker", "one");
                    assertEquals("accepted", sent.text("status"), sent.toString());
                    first = sent.text("id");
                    SseClient.Frame one = stream.nextEvent(WAIT);
                    assertEquals(1, one.seq());
                    assertEquals("one", one.json().get("text").asText());
                }
                assertEquals(202, b.post(worker, "/v1/messages/" + first + "/reply", HubFixture.obj("text", "done")).status());
                await().atMost(WAIT).until(() -> a.inbox(lead).stream().anyMatch(e -> "reply".equals(e.get("kind").asText())
                        && first.equals(e.get("corrId").asText())));
                await().atMost(WAIT).until(() -> "replied".equals(a.get(lead, "/v1/messages/" + first).text("state")));
            }

            // b away: a keeps accepting; b back on the same data and creds re-makes its durable on a's outbox at its cursor.
            String second = a.sendOk(lead, "worker", "two").text("id");
            try (HubFixture b = gateway("b", bFile, nats)) {
                await().atMost(WAIT).until(() -> b.inbox(worker).size() == 2);
                List<JsonNode> inbox = b.inbox(worker);
                assertEquals(List.of(first, second), inbox.stream().map(e -> e.get("id").asText()).toList());
                assertEquals(List.of(1L, 2L), inbox.stream().map(e -> e.get("seq").asLong()).toList());
                assertFalse(nats.log().contains("Violation"),
                        () -> "the gateways did everything within their permissions:\n" + nats.log());

                // With a's credentials, a raw client cannot write into b's outbox: NATS refuses it.
                try (GatewayConnection raw = GatewayConnection.connect(nats, aCreds)) {
                    raw.assertPublishRefused("parley.out.b.a");
                }
                assertTrue(nats.log().contains("Publish Violation"), nats::log);
                // Nothing landed in PARLEY_OUT_b: a takes b's outbox in order, so once b's next reply is
                // on a, a forged record before it would have been taken (and counted unreadable) too.
                assertEquals(202, b.post(worker, "/v1/messages/" + second + "/reply", HubFixture.obj("text", "after")).status());
                await().atMost(WAIT).until(() -> a.inbox(lead).stream().anyMatch(e -> second.equals(e.path("corrId").asText())));
                assertEquals(0, a.metric("parley_federation_unreadable_total"));
                assertEquals(0, a.metric("parley_federation_refused_total"));
            }
        }
    }

    @Test
    void aGatewayStartedWithAnotherGatewaysCredentialsFailsSayingSo() throws Exception {
        Path xFile = credsFile(authority.mint(new GatewayId("x"), StateRoomBuckets.DEFAULT));
        try (NatsServer nats = NatsServer.start(tmp.resolve("nats"), authority::serverConfig)) {
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> gateway("a", xFile, nats).close());
            assertTrue(refused.getMessage().contains("its credentials are not those of gateway a"), refused.getMessage());
            assertTrue(refused.getMessage().contains("Permissions Violation"), refused.getMessage());
        }
    }
}
