package dev.parley.core;

import java.util.Locale;

/** The rule that allowed an envelope to travel; recorded in {@code trace.route}. */
public enum Route {
    /** A node writing to its own inbox. */
    SELF,
    /** Parent and child, or siblings. */
    INTRA_GROUP,
    /** An unexpired explicit grant. */
    GRANT,
    /** The receiver of an envelope answering its sender. */
    REPLY,
    /** A topic event to a subscriber the ACL (or a topic grant) lets the publisher reach. */
    TOPIC,
    /** A broadcast: the admin to anyone, a node to its own group. */
    BROADCAST,
    /** A task and its changes between creator and assignee. */
    TASK,
    /** A notice from the hub itself (dead letters, incidents). */
    SYSTEM,
    /** A policy rule that allows beyond the ACL; {@code trace.rule} names it. */
    POLICY;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Route parse(String wire) {
        return valueOf(wire.toUpperCase(Locale.ROOT));
    }
}
