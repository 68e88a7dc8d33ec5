package dev.parley.core;

import java.util.List;
import java.util.Map;
import java.util.Set;

/** What the store holds of the graph, loaded once when the hub starts. */
public record GraphSnapshot(List<Node> nodes, Set<NodeId> retired, Map<NodeId, String> tokenHashes,
                            List<Grant> grants) {
}
