package dev.parley.server.admission;

import static dev.parley.server.admission.Admit.header;
import static dev.parley.server.admission.Admit.inviteToken;
import static dev.parley.server.admission.Admit.redeem;
import static dev.parley.server.admission.Admit.ticket;
import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hub's ticket signing key: created on first start (0600), kept across restarts, rotated without breaking live tickets. */
class SigningKeyRotationTest {
    @TempDir
    Path dataDir;

    @Test
    void rotationKeepsAnOldTicketRedeemable() {
        // the default ticket lifetime (a minute): the old ticket is redeemed well within it
        try (HubFixture hub = HubFixture.start(dataDir, c -> c.withExchangesPerMinute(100_000))) {
            String a = uid("rot-a");
            String oldTicket = ticket(hub, inviteToken(hub, hub.admin(), "nodeId", a), a, null);
            String oldKid = header(oldTicket).path("kid").asText();

            assertError(hub.post(hub.createNode(uid("rot-n"), null), "/v1/auth/keys/rotate", null), 403, "forbidden");
            assertError(hub.post(null, "/v1/auth/keys/rotate", null), 401, "unauthorized");
            Resp rotated = hub.post(hub.admin(), "/v1/auth/keys/rotate", null);
            assertEquals(200, rotated.status(), rotated::toString);
            String newKid = rotated.text("kid");
            assertNotEquals(oldKid, newKid);

            // new tickets are signed with the new key; both keys are published
            String c = uid("rot-c");
            String newTicket = ticket(hub, inviteToken(hub, hub.admin(), "nodeId", c), c, null);
            assertEquals(newKid, header(newTicket).path("kid").asText());
            List<String> kids = new ArrayList<>();
            hub.get(null, "/v1/auth/keys").get("keys").forEach(k -> kids.add(k.path("kid").asText()));
            assertEquals(List.of(newKid, oldKid), kids, "the active key first, then the retired one");

            // a ticket signed by the old key is still good
            assertEquals(201, redeem(hub, oldTicket).status(), "an old ticket stays redeemable after rotation");
            assertEquals(201, redeem(hub, newTicket).status());
        }
    }

    /**
     * Separate from the test above, which redeems an old ticket in time: with two-second
     * tickets "in time" would be a race against the machine, while "once expired" is not.
     */
    @Test
    void anOldTicketIsRefusedOnceExpiredAndTheRetiredKeyDropsOut() {
        try (HubFixture hub = HubFixture.start(dataDir, c -> c.withTicketTtl(Duration.ofSeconds(2))
                .withExchangesPerMinute(100_000))) {
            String b = uid("rot-b");
            String oldTicket = ticket(hub, inviteToken(hub, hub.admin(), "nodeId", b), b, null);
            assertEquals(200, hub.post(hub.admin(), "/v1/auth/keys/rotate", null).status());

            // once it has expired it is refused (expired, then unknown once its key is forgotten)
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250)).until(() ->
                    redeem(hub, oldTicket).status() == 401);
            Resp late = redeem(hub, oldTicket);
            assertTrue(List.of("expired_ticket", "invalid_ticket").contains(late.error()), late::toString);
            // and the retired key drops out of the published set after its retention
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250)).until(() ->
                    hub.get(null, "/v1/auth/keys").get("keys").size() == 1);
            assertError(redeem(hub, oldTicket), 401, "invalid_ticket");
        }
    }

    @Test
    void theKeyIsCreatedWithMode0600AndSurvivesARestart() throws Exception {
        String node = uid("rot-restart");
        String ticket;
        String kid;
        String issuer;
        try (HubFixture hub = HubFixture.start(dataDir)) {
            ticket = ticket(hub, inviteToken(hub, hub.admin(), "nodeId", node), node, null);
            kid = header(ticket).path("kid").asText();
            issuer = Admit.claims(ticket).path("iss").asText();
        }
        Path signing = dataDir.resolve("signing");
        assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
                PosixFilePermission.OWNER_EXECUTE), Files.getPosixFilePermissions(signing));
        try (Stream<Path> files = Files.list(signing)) {
            List<Path> keys = files.toList();
            assertEquals(1, keys.size(), "one key file: " + keys);
            assertEquals(kid + ".json", keys.get(0).getFileName().toString());
            assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE),
                    Files.getPosixFilePermissions(keys.get(0)));
        }
        assertEquals(issuer, Files.readString(dataDir.resolve("hub.id")).strip());

        try (HubFixture again = HubFixture.start(dataDir)) {
            // same key, same issuer: a ticket minted before the restart redeems after it
            assertEquals(201, redeem(again, ticket).status());
            String rotated = again.hub().rotateSigningKey();
            assertNotEquals(kid, rotated);
            try (Stream<Path> files = Files.list(signing)) {
                for (Path f : files.toList()) {
                    assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE),
                            Files.getPosixFilePermissions(f), f::toString);
                }
            }
            Resp audit = again.get(again.admin(), "/v1/audit?limit=50");
            boolean audited = false;
            for (JsonNode item : audit.items()) {
                audited |= item.path("action").asText().equals("auth.keys.rotate")
                        && item.path("target").asText().equals(rotated);
            }
            assertTrue(audited, "key rotation must be audited: " + audit);
        }
        try (HubFixture third = HubFixture.start(dataDir)) {
            String other = uid("rot-third");
            String t = ticket(third, inviteToken(third, third.admin(), "nodeId", other), other, null);
            assertNotEquals(kid, header(t).path("kid").asText(), "the rotated key stays active across restarts");
        }
    }
}
