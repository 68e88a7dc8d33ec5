package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * One agent turn: {@code node} working envelope {@code envelopeId}, named by the node's
 * runner ({@code id}, unique per node). Its span follows the envelope's in the envelope's
 * trace; {@code adapter} is what ran it (echo, command, claude-code, …). Ended when its
 * {@code stop} event came. {@code events} and {@code chars} are what it holds: how many, and
 * how many characters of JSON.
 */
public record Turn(NodeId node, String id, String envelopeId, String adapter, TraceContext context, Instant startedAt,
                   Optional<Instant> stoppedAt, int events, long chars) {

    /** An event of a turn as the hub keeps it: checked against the trace contract at the edge, kept as its JSON. */
    public record Event(String id, String type, Instant at, String json) {
        public static final String STOP = "stop";
    }

    /** A turn with its events, in order. */
    public record WithEvents(Turn turn, java.util.List<Event> events) {
        public WithEvents {
            events = java.util.List.copyOf(events);
        }
    }
}
