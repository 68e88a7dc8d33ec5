package dev.parley.server.admission;

import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.HubFixture.Resp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

/** What the admission tests share: node keys and proofs, the invite → exchange → redeem calls, JWT surgery. */
final class Admit {
    static final Base64.Encoder B64U = Base64.getUrlEncoder().withoutPadding();
    static final Base64.Decoder B64U_DECODER = Base64.getUrlDecoder();

    private Admit() {
    }

    /** A node's Ed25519 key pair and its public key as the wire wants it: raw 32 bytes, base64url. */
    record NodeKeys(KeyPair pair, String publicKey) {
        String sign(String message) {
            return Admit.sign(pair.getPrivate(), message);
        }

        String exchangeProof(String inviteToken, String nodeId, String nonce) {
            return sign("parley-exchange|" + inviteToken + "|" + nodeId + "|" + nonce);
        }

        String rotateProof(String nodeId, String nonce) {
            return sign("parley-rotate|" + nodeId + "|" + nonce);
        }
    }

    static NodeKeys newKeys() {
        try {
            KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            byte[] spki = pair.getPublic().getEncoded();
            return new NodeKeys(pair, B64U.encodeToString(Arrays.copyOfRange(spki, spki.length - 32, spki.length)));
        } catch (GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }

    static String sign(PrivateKey key, String message) {
        return B64U.encodeToString(signBytes(key, message.getBytes(StandardCharsets.UTF_8)));
    }

    static byte[] signBytes(PrivateKey key, byte[] input) {
        try {
            Signature signer = Signature.getInstance("Ed25519");
            signer.initSign(key);
            signer.update(input);
            return signer.sign();
        } catch (GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }

    static String nonce() {
        return "n-" + UUID.randomUUID();
    }

    // ------------------------------------------------------------------ HTTP

    /** {@code POST /v1/invites} by {@code caller}; fields as key/value pairs. */
    static Resp invite(HubFixture hub, String caller, Object... kv) {
        return hub.post(caller, "/v1/invites", obj(kv));
    }

    /** An invite that must be issued; returns its token. */
    static String inviteToken(HubFixture hub, String caller, Object... kv) {
        Resp r = invite(hub, caller, kv);
        assertEquals(201, r.status(), () -> "invite not issued: " + r);
        assertNotNull(r.text("inviteToken"), () -> "no inviteToken in " + r);
        return r.text("inviteToken");
    }

    /** {@code POST /v1/auth/exchange} without a bearer; {@code keys} null sends no proof. */
    static Resp exchange(HubFixture hub, String inviteToken, String nodeId, String nonce, NodeKeys keys) {
        ObjectNode body = obj("inviteToken", inviteToken, "nodeId", nodeId, "nonce", nonce);
        if (keys != null) {
            body.put("publicKey", keys.publicKey());
            body.put("proof", keys.exchangeProof(inviteToken, nodeId, nonce));
        }
        return hub.post(null, "/v1/auth/exchange", body);
    }

    /** An exchange that must succeed; returns the ticket. */
    static String ticket(HubFixture hub, String inviteToken, String nodeId, NodeKeys keys) {
        Resp r = exchange(hub, inviteToken, nodeId, nonce(), keys);
        assertEquals(200, r.status(), () -> "exchange refused: " + r);
        return r.text("ticket");
    }

    static Resp redeem(HubFixture hub, String ticket) {
        return hub.post(null, "/v1/auth/redeem", obj("ticket", ticket));
    }

    /** Invite (by the admin, bound to {@code nodeId}), exchange and redeem: the new node's token. */
    static String admit(HubFixture hub, String nodeId, NodeKeys keys) {
        String token = inviteToken(hub, hub.admin(), "nodeId", nodeId);
        Resp r = redeem(hub, ticket(hub, token, nodeId, keys));
        assertEquals(201, r.status(), () -> "redeem refused: " + r);
        return r.text("token");
    }

    // ------------------------------------------------------------------ JWT surgery

    static String[] parts(String ticket) {
        return ticket.split("\\.", -1);
    }

    static ObjectNode header(String ticket) {
        return decodeJson(parts(ticket)[0]);
    }

    static ObjectNode claims(String ticket) {
        return decodeJson(parts(ticket)[1]);
    }

    static ObjectNode decodeJson(String part) {
        try {
            return (ObjectNode) HubFixture.JSON.readTree(B64U_DECODER.decode(part));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String encodeJson(JsonNode json) {
        try {
            return B64U.encodeToString(HubFixture.JSON.writeValueAsBytes(json));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A compact JWT of {@code header} and {@code claims}, signed with {@code key} (Ed25519). */
    static String signed(JsonNode header, JsonNode claims, PrivateKey key) {
        String input = encodeJson(header) + "." + encodeJson(claims);
        return input + "." + B64U.encodeToString(signBytes(key, input.getBytes(StandardCharsets.US_ASCII)));
    }

    /** The hub's active signing key, read from {@code <data>/signing/} as an operator with file access could. */
    static PrivateKey hubSigningKey(Path dataDir) {
        try (Stream<Path> files = Files.list(dataDir.resolve("signing"))) {
            List<JsonNode> keys = files.filter(f -> f.toString().endsWith(".json")).map(f -> {
                try {
                    return HubFixture.JSON.readTree(Files.readString(f));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).filter(k -> k.path("retiredAt").isNull()).toList();
            assertEquals(1, keys.size(), "exactly one active signing key expected: " + keys);
            return KeyFactory.getInstance("Ed25519").generatePrivate(new PKCS8EncodedKeySpec(
                    B64U_DECODER.decode(keys.get(0).path("privateKey").asText())));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new AssertionError(e);
        }
    }
}
