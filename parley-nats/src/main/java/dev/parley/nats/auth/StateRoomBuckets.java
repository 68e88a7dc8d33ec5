package dev.parley.nats.auth;

/**
 * The JetStream KV buckets of the state room that gateway credentials open: {@code state}
 * (nodes, grants, routing, cursors; every gateway may write every key) and {@code presence}
 * (one key per gateway, named by its id; a gateway may write only its own).
 */
public record StateRoomBuckets(String state, String presence) {
    public static final StateRoomBuckets DEFAULT = new StateRoomBuckets("parley-state", "parley-presence");

    public StateRoomBuckets {
        requireBucketName(state);
        requireBucketName(presence);
    }

    private static void requireBucketName(String name) {
        if (name == null || !name.matches("^[A-Za-z0-9_-]{1,64}$")) {
            throw new IllegalArgumentException("a KV bucket name is 1 to 64 characters of A-Z, a-z, 0-9, '_' and '-'; got " + name);
        }
    }
}
