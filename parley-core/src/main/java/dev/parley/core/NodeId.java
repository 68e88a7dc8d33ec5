package dev.parley.core;

import java.util.regex.Pattern;

/** A node's identifier: {@code ^[a-z0-9][a-z0-9._-]{0,62}$}. */
public record NodeId(String value) implements Comparable<NodeId> {
    private static final Pattern PATTERN = Pattern.compile("^[a-z0-9][a-z0-9._-]{0,62}$");

    /** The hub itself, the sender of its notices (dead letters, incidents, admin broadcasts); no node may take it. */
    public static final NodeId HUB = new NodeId("parley");

    public NodeId {
        if (value == null || !PATTERN.matcher(value).matches()) {
            throw new ParleyException(ErrorCode.INVALID_NODE_ID,
                    "node id must match ^[a-z0-9][a-z0-9._-]{0,62}$");
        }
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
