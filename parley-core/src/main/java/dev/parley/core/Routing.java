package dev.parley.core;

import java.util.List;

/**
 * Where a node's mail goes in a federation: the gateway that owns it (keeps its inbox) and,
 * in order, the gateways that take it over when that one is gone. A fallback that takes a
 * node over becomes its owner, and the gateway it took it from goes to the end of the list.
 */
public record Routing(NodeId node, String owner, List<String> fallbacks) {
    /** Most fallbacks a node may have. */
    public static final int MAX_FALLBACKS = 8;

    public Routing {
        fallbacks = List.copyOf(fallbacks);
    }
}
