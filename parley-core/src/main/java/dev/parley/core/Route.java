package dev.parley.core;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

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

    /** Each route by its wire name: every envelope read from the store parses one. */
    private static final Map<String, Route> BY_WIRE = Arrays.stream(values())
            .collect(Collectors.toUnmodifiableMap(Route::wire, route -> route));

    /** Kept, not lower-cased on each call: every envelope written to the wire names its route. */
    private final String wire = name().toLowerCase(Locale.ROOT);

    public String wire() {
        return wire;
    }

    public static Route parse(String wire) {
        Route route = BY_WIRE.get(wire);
        return route != null ? route : valueOf(wire.toUpperCase(Locale.ROOT));
    }
}
