package dev.parley.core;

import java.util.List;
import java.util.Optional;

/** Where the hub keeps agent turns and their events. */
public interface TraceStore {
    Optional<Turn> turn(NodeId node, String turnId);

    /**
     * Stores {@code turn} (new, or its new event count and stop) and appends {@code events},
     * in one transaction.
     */
    void append(Turn turn, boolean isNew, List<Turn.Event> events);

    /** The stored events of a turn whose ids are among {@code ids}. */
    List<Turn.Event> events(NodeId node, String turnId, List<String> ids);

    /** Every event of a turn, in order. */
    List<Turn.Event> events(NodeId node, String turnId);

    /** The turns of a trace, of {@code owners} only when given, oldest first, at most {@code limit}. */
    List<Turn> turnsOfTrace(String traceId, Optional<java.util.Set<NodeId>> owners, int limit);
}
