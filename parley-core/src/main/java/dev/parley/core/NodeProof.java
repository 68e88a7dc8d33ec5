package dev.parley.core;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.HexFormat;

/**
 * A node's proof that it holds the private half of its Ed25519 key: a signature over a
 * fixed UTF-8 string. Keys are the raw 32-byte Ed25519 public key and signatures the raw
 * 64 bytes, both in base64url (padding optional), as in a JWK of type OKP.
 *
 * <ul>
 *   <li>exchange: {@code parley-exchange|<inviteToken>|<nodeId>|<nonce>}</li>
 *   <li>token rotation: {@code parley-rotate|<nodeId>|<nonce>}</li>
 * </ul>
 */
public final class NodeProof {
    /** The DER prefix that turns a raw Ed25519 key into an X.509 SubjectPublicKeyInfo. */
    private static final byte[] SPKI_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");
    private static final int KEY_BYTES = 32;
    private static final int SIGNATURE_BYTES = 64;
    /** Longer inputs are refused before decoding: a key or a signature never needs this much. */
    private static final int MAX_ENCODED = 200;

    private NodeProof() {
    }

    public static String exchangeMessage(String inviteToken, NodeId node, String nonce) {
        return "parley-exchange|" + inviteToken + "|" + node.value() + "|" + nonce;
    }

    public static String rotateMessage(NodeId node, String nonce) {
        return "parley-rotate|" + node.value() + "|" + nonce;
    }

    /** Whether {@code proof} is a valid signature of {@code message} by {@code publicKey}; false for anything malformed. */
    public static boolean valid(String publicKey, String message, String proof) {
        try {
            PublicKey key = publicKey(publicKey);
            byte[] signature = decode(proof);
            if (signature.length != SIGNATURE_BYTES) {
                return false;
            }
            Signature verifier = Signature.getInstance("Ed25519");
            verifier.initVerify(key);
            verifier.update(message.getBytes(StandardCharsets.UTF_8));
            return verifier.verify(signature);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }

    /** The JDK key for a base64url raw Ed25519 public key; IllegalArgumentException when it is not one. */
    public static PublicKey publicKey(String encoded) {
        byte[] raw = decode(encoded);
        if (raw.length != KEY_BYTES) {
            throw new IllegalArgumentException("an Ed25519 public key has 32 bytes");
        }
        byte[] spki = new byte[SPKI_PREFIX.length + KEY_BYTES];
        System.arraycopy(SPKI_PREFIX, 0, spki, 0, SPKI_PREFIX.length);
        System.arraycopy(raw, 0, spki, SPKI_PREFIX.length, KEY_BYTES);
        try {
            return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(spki));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("not an Ed25519 public key", e);
        }
    }

    /** The raw 32 bytes of a JDK Ed25519 public key, in base64url without padding. */
    public static String encode(PublicKey key) {
        byte[] spki = key.getEncoded();
        if (spki.length != SPKI_PREFIX.length + KEY_BYTES) {
            throw new IllegalArgumentException("not an Ed25519 public key");
        }
        byte[] raw = new byte[KEY_BYTES];
        System.arraycopy(spki, SPKI_PREFIX.length, raw, 0, KEY_BYTES);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
    }

    /** Whether {@code encoded} is a base64url raw Ed25519 public key. */
    public static boolean wellFormedKey(String encoded) {
        try {
            publicKey(encoded);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static byte[] decode(String encoded) {
        if (encoded == null || encoded.isEmpty() || encoded.length() > MAX_ENCODED) {
            throw new IllegalArgumentException("empty or too long");
        }
        return Base64.getUrlDecoder().decode(encoded);
    }
}
