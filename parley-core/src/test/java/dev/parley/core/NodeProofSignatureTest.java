package dev.parley.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class NodeProofSignatureTest {
    private static final Base64.Encoder B64U = Base64.getUrlEncoder().withoutPadding();

    private static String sign(KeyPair pair, String message) throws Exception {
        Signature signer = Signature.getInstance("Ed25519");
        signer.initSign(pair.getPrivate());
        signer.update(message.getBytes(StandardCharsets.UTF_8));
        return B64U.encodeToString(signer.sign());
    }

    @Test
    void verifiesRawKeysAndRefusesEverythingElse() throws Exception {
        KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        KeyPair other = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        String key = NodeProof.encode(pair.getPublic());
        assertEquals(43, key.length(), "32 bytes in unpadded base64url");
        String message = NodeProof.exchangeMessage("pi_tok", NodeId.of("n1"), "nonce-1");
        assertEquals("parley-exchange|pi_tok|n1|nonce-1", message);
        assertEquals("parley-rotate|n1|x", NodeProof.rotateMessage(NodeId.of("n1"), "x"));

        assertTrue(NodeProof.valid(key, message, sign(pair, message)));
        assertTrue(NodeProof.valid(key + "=", message, sign(pair, message)), "padding is optional");
        assertFalse(NodeProof.valid(key, message, sign(other, message)));
        assertFalse(NodeProof.valid(key, message + "x", sign(pair, message)));
        assertFalse(NodeProof.valid(key, message, "AAAA"));
        assertFalse(NodeProof.valid(key, message, "not base64 !"));
        assertFalse(NodeProof.valid("AAAA", message, sign(pair, message)));
        assertFalse(NodeProof.valid(B64U.encodeToString(pair.getPublic().getEncoded()), message, sign(pair, message)),
                "SPKI is not accepted: the wire carries the raw key");
        assertFalse(NodeProof.valid(null, message, sign(pair, message)));
        assertFalse(NodeProof.valid(key, message, "A".repeat(10_000)));
    }
}
