package dev.parley.core;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the store holds of the graph, loaded once when the hub starts. {@code owners} names
 * the gateway of each node another gateway owns (federation).
 */
public record GraphSnapshot(List<Node> nodes, Set<NodeId> retired, Map<NodeId, String> tokenHashes,
                            List<Grant> grants, Map<NodeId, String> owners) {

    /** Loads the snapshot into {@code graph}. */
    public void into(Graph graph) {
        nodes.forEach(n -> {
            String owner = owners.get(n.id());
            if (owner == null) {
                graph.put(n);
            } else {
                graph.putRemote(n, owner);
            }
        });
        retired.forEach(graph::retire);
        grants.forEach(graph::putGrant);
    }
}
