package dev.parley.nats.auth;

import dev.parley.nats.testing.GatewayConnection;
import dev.parley.nats.testing.NatsServer;
import io.nats.client.AuthenticationException;
import io.nats.client.Connection;
import io.nats.client.NKey;
import io.nats.client.Options;
import io.nats.client.support.JwtUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Who nats-server lets in when it trusts only Parley's operator: gateway users minted at any
 * time, and nobody without credentials or with expired, revoked, tampered or foreign-signed ones.
 */
class NatsAuthorityTest {
    private static final StateRoomBuckets BUCKETS = StateRoomBuckets.DEFAULT;

    private final NatsAuthority authority = NatsAuthority.create();
    @TempDir
    Path tmp;
    private NatsServer server;

    @BeforeEach
    void start() {
        server = NatsServer.start(tmp, authority::serverConfig);
    }

    @AfterEach
    void stop() throws InterruptedException {
        server.close();
    }

    @Test
    void aGatewayMintedAfterTheServerStartedConnectsWithoutReload() throws Exception {
        GatewayId late = new GatewayId("late-gw");
        try (GatewayConnection gateway = GatewayConnection.connect(server, authority.mint(late, BUCKETS))) {
            assertEquals("PARLEY_OUT_late-gw", gateway.createOutbox().getConfiguration().getName());
            gateway.js().publish("parley.out.late-gw.a", "hi".getBytes(StandardCharsets.UTF_8));
            gateway.assertNoErrors();
        }
    }

    @Test
    void anUnauthenticatedConnectionIsRefused() {
        refusedAtConnect(Options.builder());
    }

    @Test
    void expiredCredentialsAreRefused() {
        GatewayCredentials expired = authority.mint(new GatewayId("a"), BUCKETS,
                Instant.now().minus(Duration.ofHours(2)), Duration.ofHours(1));

        refusedAtConnect(Options.builder().authHandler(expired.authHandler()));
    }

    @Test
    void credentialsWhosePermissionsWereEditedAreRefused() {
        GatewayCredentials minted = authority.mint(new GatewayId("a"), BUCKETS);
        String[] parts = minted.jwt().split("\\.");
        String claims = new String(Base64.getUrlDecoder().decode(parts[1]), StandardCharsets.UTF_8);
        String widened = claims.replace("\"parley.out.a.>\"", "\">\"");
        assertNotEquals(claims, widened, "the edit must change the claims");
        String tampered = parts[0] + "." + Base64.getUrlEncoder().withoutPadding()
                .encodeToString(widened.getBytes(StandardCharsets.UTF_8)) + "." + parts[2];
        GatewayCredentials edited = new GatewayCredentials(minted.gateway(), minted.userPublicKey(), tampered, minted.seed());

        refusedAtConnect(Options.builder().authHandler(edited.authHandler()));
    }

    @Test
    void aUserSignedByAKeyTheAccountDoesNotListIsRefused() throws Exception {
        NKey foreignSigner = NKey.createAccount(new SecureRandom());
        NKey user = NKey.createUser(new SecureRandom());
        String userKey = new String(user.getPublicKey());
        String jwt = JwtUtils.issueUserJWT(foreignSigner, userKey, "intruder", Duration.ZERO,
                Instant.now().getEpochSecond(), new JwtUtils.UserClaim(authority.accountPublicKey()));
        GatewayCredentials forged = new GatewayCredentials(new GatewayId("a"), userKey, jwt, new String(user.getSeed()));

        refusedAtConnect(Options.builder().authHandler(forged.authHandler()));
    }

    @Test
    void revokingAGatewayClosesItsConnectionAndRefusesItWithoutReload() throws Exception {
        GatewayCredentials kept = authority.mint(new GatewayId("a"), BUCKETS);
        GatewayCredentials revoked = authority.mint(new GatewayId("b"), BUCKETS);
        try (GatewayConnection a = GatewayConnection.connect(server, kept);
             GatewayConnection b = GatewayConnection.connect(server, revoked)) {
            authority.revoke(revoked.userPublicKey(), Instant.now()).publishAccount(server.url());

            await().atMost(Duration.ofSeconds(10)).until(() -> b.nats.getStatus() == Connection.Status.CLOSED);
            assertTrue(b.errors.stream().anyMatch(e -> e.contains("Revoked")), () -> "b was told why: " + b.errors);
            refusedAtConnect(Options.builder().authHandler(revoked.authHandler()));
            assertEquals(Connection.Status.CONNECTED, a.nats.getStatus());
            a.createOutbox();
            a.assertNoErrors();
        }
    }

    @Test
    void aRestoredAuthorityMintsUsersTheRunningServerAccepts() throws Exception {
        NatsAuthority restored = NatsAuthority.restore(authority.export());

        assertEquals(authority.accountPublicKey(), restored.accountPublicKey());
        try (GatewayConnection gateway = GatewayConnection.connect(server, restored.mint(new GatewayId("a"), BUCKETS))) {
            gateway.createOutbox();
            gateway.assertNoErrors();
        }
    }

    @Test
    void revocationsSurviveExportAndRestore() {
        GatewayCredentials revoked = authority.mint(new GatewayId("b"), BUCKETS);
        String exported = authority.revoke(revoked.userPublicKey(), Instant.ofEpochSecond(1_700_000_000)).export();

        String claims = JwtUtils.getClaimBody(NatsAuthority.restore(exported).accountJwt());
        assertTrue(claims.contains("\"" + revoked.userPublicKey() + "\":1700000000"), claims);
    }

    @Test
    void textThatIsNotAnExportIsRefusedWithAClearMessage() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> NatsAuthority.restore("{\"operator\":\"nope\"}"));
        assertTrue(refused.getMessage().startsWith("not an exported NATS authority"), refused.getMessage());
    }

    @Test
    void credentialsNeverPrintTheirSeed() {
        GatewayCredentials minted = authority.mint(new GatewayId("a"), BUCKETS);

        assertFalse(minted.toString().contains(minted.seed()));
        assertTrue(minted.creds().contains(minted.seed()) && minted.creds().contains(minted.jwt()));
    }

    /**
     * jnats records the server's -ERR but waits out the connection timeout before failing the
     * connect, so a refusal gets a shorter one; the exception type says it was the credentials.
     */
    private void refusedAtConnect(Options.Builder options) {
        AuthenticationException refused = assertThrows(AuthenticationException.class,
                () -> GatewayConnection.connect(server, new GatewayId("a"), options.connectionTimeout(Duration.ofSeconds(3))).close());
        assertTrue(refused.getMessage().toLowerCase().contains("authorization violation"), refused.getMessage());
    }
}
