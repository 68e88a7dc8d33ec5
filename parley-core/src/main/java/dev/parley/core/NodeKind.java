package dev.parley.core;

import java.util.Locale;

/** How a node is run. All kinds are equal on the message graph. */
public enum NodeKind {
    /** Parley owns its process lifecycle. */
    MANAGED,
    /** Joins by itself: a Claude Code session, any HTTP or A2A client. */
    EXTERNAL,
    /** A person, reached through a channel adapter. */
    HUMAN;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static NodeKind parse(String wire) {
        for (NodeKind kind : values()) {
            if (kind.wire().equals(wire)) {
                return kind;
            }
        }
        throw new ParleyException(ErrorCode.INVALID_REQUEST,
                "kind must be one of managed, external, human");
    }
}
