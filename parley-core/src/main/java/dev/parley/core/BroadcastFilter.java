package dev.parley.core;

import java.util.Map;
import java.util.Optional;

/**
 * Which nodes a broadcast reaches: those of the group led by {@code group} (a parent and
 * its children), carrying every one of {@code labels} with the same value, of {@code kind};
 * an absent part does not narrow.
 */
public record BroadcastFilter(Optional<NodeId> group, Map<String, String> labels, Optional<NodeKind> kind) {
    public BroadcastFilter {
        labels = Map.copyOf(labels);
    }

    /** Whether {@code node} has the labels and kind asked for (group membership is decided by the caller). */
    public boolean matches(Node node) {
        return kind.map(k -> k == node.kind()).orElse(true)
                && labels.entrySet().stream().allMatch(l -> l.getValue().equals(node.labels().get(l.getKey())));
    }
}
