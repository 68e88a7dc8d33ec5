package dev.parley.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bearer tokens: minted with 256 random bits, kept only as SHA-256 hashes, and resolved
 * to a {@link Principal}. Hashes are compared with {@link MessageDigest#isEqual}, which
 * takes the same time wherever the first difference lies.
 */
public final class Tokens {
    private static final int MAX_TOKEN_LENGTH = 256;
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Never used itself, only cloned: a fresh, unshared digest per call. */
    private static final MessageDigest SHA_256 = sha256();

    private final byte[] adminHash;
    private final Map<String, NodeId> nodeByHash = new ConcurrentHashMap<>();
    private final Map<NodeId, String> hashByNode = new ConcurrentHashMap<>();

    public Tokens(String adminToken, Map<NodeId, String> nodeHashes) {
        this.adminHash = digest(adminToken);
        nodeHashes.forEach(this::bind);
    }

    /** A fresh token: a prefix that says what it is, then 32 random bytes in base64url. */
    public static String mint(String prefix) {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return prefix + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    public static String hash(String token) {
        return HexFormat.of().formatHex(digest(token));
    }

    /** The principal a bearer token stands for, if any. */
    public Optional<Principal> authenticate(String token) {
        if (token == null || token.isEmpty() || token.length() > MAX_TOKEN_LENGTH) {
            return Optional.empty();
        }
        byte[] presented = digest(token);
        if (MessageDigest.isEqual(presented, adminHash)) {
            return Optional.of(new Principal.Admin());
        }
        String hex = HexFormat.of().formatHex(presented);
        NodeId node = nodeByHash.get(hex);
        if (node == null) {
            return Optional.empty();
        }
        String stored = hashByNode.get(node);
        if (stored == null || !MessageDigest.isEqual(HexFormat.of().parseHex(stored), presented)) {
            return Optional.empty();
        }
        return Optional.of(new Principal.Caller(node));
    }

    /** Makes {@code hash} the only valid token hash of {@code node}. */
    public void bind(NodeId node, String hash) {
        String previous = hashByNode.put(node, hash);
        if (previous != null) {
            nodeByHash.remove(previous);
        }
        nodeByHash.put(hash, node);
    }

    public void revoke(NodeId node) {
        String previous = hashByNode.remove(node);
        if (previous != null) {
            nodeByHash.remove(previous);
        }
    }

    private static byte[] digest(String token) {
        try {
            // a clone of one digest skips the provider lookup getInstance makes on every request
            return ((MessageDigest) SHA_256.clone()).digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("the platform's SHA-256 cannot be cloned", e);
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
