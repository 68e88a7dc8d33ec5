package dev.parley.core;

import java.util.Map;
import java.util.Optional;

/** A request to register a node. */
public record NewNode(NodeId id, NodeKind kind, Optional<NodeId> parent, Map<String, String> labels) {
    public NewNode {
        labels = Map.copyOf(labels);
    }
}
