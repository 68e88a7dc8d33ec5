package dev.parley.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The group ids a rule reads are kept per group and follow every node that joins or leaves it. */
class GraphGroupIdsTest {
    private static Node node(String id, String parent) {
        return new Node(NodeId.of(id), NodeKind.EXTERNAL, Optional.ofNullable(parent).map(NodeId::of), Map.of(),
                parent == null ? 0 : 1, Instant.EPOCH);
    }

    @Test
    void groupIdsAreKeptUntilTheGroupChanges() {
        Graph graph = new Graph();
        Node lead = node("lead", null);
        Node a = node("a", "lead");
        Node other = node("other", null);
        graph.put(lead);
        graph.put(a);
        graph.put(other);
        graph.put(node("o1", "other"));

        List<String> first = graph.groupIdsOf(a);
        assertEquals(List.of("lead", "a"), first);
        assertSame(first, graph.groupIdsOf(a), "kept while nothing changes");
        assertSame(first, graph.groupIdsOf(lead), "a root reads the group it leads");
        assertSame(first, RuleInput.Party.of(a, graph).group(), "the rule input does not copy it");
        List<String> others = graph.groupIdsOf(other);

        graph.put(node("b", "lead"));
        assertEquals(List.of("lead", "a", "b"), graph.groupIdsOf(a));
        assertEquals(graph.groupOf(a).stream().map(NodeId::value).toList(), graph.groupIdsOf(a));
        graph.retire(NodeId.of("a"));
        assertEquals(List.of("lead", "b"), graph.groupIdsOf(lead));
        assertSame(others, graph.groupIdsOf(other), "another group is untouched");
    }
}
