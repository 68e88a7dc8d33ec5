package dev.parley.core;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * A node: an identity with an inbox. {@code depth} is the number of ancestors (0 for a
 * root); lineage is recorded through {@code parent} and never changes.
 */
public record Node(NodeId id, NodeKind kind, Optional<NodeId> parent, Map<String, String> labels,
                   int depth, Instant createdAt) {
    public Node {
        labels = Map.copyOf(labels);
    }

    /** True when {@code other} is this node's parent, child or sibling. */
    public boolean sharesGroupWith(Node other) {
        return parent.equals(Optional.of(other.id))
                || other.parent.equals(Optional.of(id))
                || (parent.isPresent() && parent.equals(other.parent));
    }
}
