package dev.parley.server.admission;

import static dev.parley.server.admission.Admit.admit;
import static dev.parley.server.admission.Admit.exchange;
import static dev.parley.server.admission.Admit.inviteToken;
import static dev.parley.server.admission.Admit.newKeys;
import static dev.parley.server.admission.Admit.nonce;
import static dev.parley.server.admission.Admit.redeem;
import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.parley.server.admission.Admit.NodeKeys;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hub run with {@code --require-node-proof}: exchanges must prove an Ed25519 key, and a
 * node admitted with a key proves it again to rotate its own token.
 */
class NodeProofTest {
    @TempDir
    static Path dataDir;
    static HubFixture hub;

    @BeforeAll
    static void startHub() {
        hub = HubFixture.start(dataDir, c -> c.withRequireNodeProof(true).withExchangesPerMinute(100_000));
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
        }
    }

    @Test
    void aMissingOrWrongProofIsNodeProofInvalid() {
        String node = uid("np");
        String token = inviteToken(hub, hub.admin(), "nodeId", node);
        NodeKeys keys = newKeys();
        NodeKeys other = newKeys();
        String nonce = nonce();
        assertError(exchange(hub, token, node, nonce, null), 401, "node_proof_invalid");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "publicKey", keys.publicKey())), 401, "node_proof_invalid");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "publicKey", keys.publicKey(), "proof", other.exchangeProof(token, node, nonce))), 401,
                "node_proof_invalid");
        assertError(hub.post(null, "/v1/auth/exchange", obj("inviteToken", token, "nodeId", node, "nonce", nonce,
                "publicKey", keys.publicKey(), "proof", keys.exchangeProof(token, node + "x", nonce))), 401,
                "node_proof_invalid");
        // the earlier checks still come first
        assertError(exchange(hub, token, uid("np-other"), nonce(), null), 403, "node_mismatch");
        assertError(exchange(hub, "pi_unknown", node, nonce(), null), 401, "invalid_token");
        // and the right proof gets a ticket that binds the key
        Resp ok = exchange(hub, token, node, nonce, keys);
        assertEquals(200, ok.status(), ok::toString);
        assertEquals(keys.publicKey(), Admit.claims(ok.text("ticket")).path("pk").asText());
        assertEquals(201, redeem(hub, ok.text("ticket")).status());
    }

    @Test
    void aNodeWithAKeyRotatesItsOwnTokenOnlyWithAFreshProof() {
        String node = uid("np-rot");
        NodeKeys keys = newKeys();
        String token = admit(hub, node, keys);
        String path = "/v1/nodes/" + node + "/token";

        assertError(hub.post(token, path, null), 401, "node_proof_invalid");
        assertError(hub.post(token, path, obj("nonce", "r1")), 401, "node_proof_invalid");
        assertError(hub.post(token, path, obj("nonce", "r1", "proof", newKeys().rotateProof(node, "r1"))), 401,
                "node_proof_invalid");
        assertError(hub.post(token, path, obj("nonce", "r1", "proof", keys.rotateProof(node, "r2"))), 401,
                "node_proof_invalid");
        assertError(hub.post(token, path, obj("nonce", "r1", "proof", keys.exchangeProof("x", node, "r1"))), 401,
                "node_proof_invalid");
        assertEquals(200, hub.get(token, "/v1/nodes/" + node).status(), "refusals leave the token working");

        Resp rotated = hub.post(token, path, obj("nonce", "r1", "proof", keys.rotateProof(node, "r1")));
        assertEquals(200, rotated.status(), rotated::toString);
        String fresh = rotated.text("token");
        assertNotEquals(token, fresh);
        assertError(hub.get(token, "/v1/nodes/" + node), 401, "unauthorized");
        assertEquals(200, hub.get(fresh, "/v1/nodes/" + node).status());

        // the same proof again is a replay
        assertError(hub.post(fresh, path, obj("nonce", "r1", "proof", keys.rotateProof(node, "r1"))), 409,
                "replay_detected");
        // the admin needs no proof
        Resp byAdmin = hub.post(hub.admin(), path, null);
        assertEquals(200, byAdmin.status(), byAdmin::toString);
        assertError(hub.get(fresh, "/v1/nodes/" + node), 401, "unauthorized");
    }

    @Test
    void aNodeWithoutAKeyRotatesAsBefore() {
        String node = uid("np-plain");
        String token = hub.createNode(node, null);
        Resp r = hub.post(token, "/v1/nodes/" + node + "/token", null);
        assertEquals(200, r.status(), r::toString);
        // and another node's token still cannot rotate it
        String other = uid("np-plain2");
        String otherToken = hub.createNode(other, null);
        assertError(hub.post(otherToken, "/v1/nodes/" + node + "/token", null), 403, "forbidden");
    }
}
