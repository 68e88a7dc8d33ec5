package dev.parley.core;

/** A node's identifier: {@code ^[a-z0-9][a-z0-9._-]{0,62}$}. */
public record NodeId(String value) implements Comparable<NodeId> {
    /** The hub itself, the sender of its notices (dead letters, incidents, admin broadcasts); no node may take it. */
    public static final NodeId HUB = new NodeId("parley");

    public NodeId {
        if (!valid(value)) {
            throw new ParleyException(ErrorCode.INVALID_NODE_ID,
                    "node id must match ^[a-z0-9][a-z0-9._-]{0,62}$");
        }
    }

    /**
     * The pattern, checked char by char: every envelope read from the store makes two ids, and
     * the regex engine was a tenth of a replaying stream's time.
     */
    private static boolean valid(String value) {
        if (value == null || value.isEmpty() || value.length() > 63 || !alphanumeric(value.charAt(0))) {
            return false;
        }
        for (int i = 1; i < value.length(); i++) {
            char c = value.charAt(i);
            if (!alphanumeric(c) && c != '.' && c != '_' && c != '-') {
                return false;
            }
        }
        return true;
    }

    private static boolean alphanumeric(char c) {
        return c >= 'a' && c <= 'z' || c >= '0' && c <= '9';
    }

    public static NodeId of(String value) {
        return new NodeId(value);
    }

    @Override
    public int compareTo(NodeId other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
