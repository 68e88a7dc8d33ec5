package dev.parley.trace.export;

import dev.parley.core.TraceContext;
import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Route;

import java.time.Instant;
import java.util.Locale;
import java.util.Optional;

/**
 * One step of the hub's work on an envelope, recorded after the fact with exact ids and times.
 *
 * @param conversationId the envelope's thread (or correlation) id, when it has one
 * @param error          the error code the step failed with ({@code acl_denied}, …), if it failed
 */
public record HubSpan(Operation operation, TraceContext ids, Instant start, Instant end, String envelopeId, NodeId from,
                      NodeId to, String kind, Optional<Route> route, int attempt, Optional<String> conversationId,
                      Optional<String> error) implements Exportable {

    /** The hub's steps: a sender hands an envelope over, the store commits it, a recipient takes it. */
    public enum Operation {
        SEND, COMMIT, DELIVER;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public HubSpan {
        if (operation == null || ids == null || start == null || end == null || from == null || to == null) {
            throw new IllegalArgumentException("a hub span needs its operation, ids, start, end, from and to");
        }
        if (envelopeId == null || envelopeId.isBlank() || kind == null || kind.isBlank()) {
            throw new IllegalArgumentException("a hub span needs the envelope's id and kind");
        }
        if (attempt < 0) {
            throw new IllegalArgumentException("attempt: 0 or more");
        }
    }

    /** The span of {@code operation} on {@code envelope}, which did not fail. */
    public static HubSpan of(Operation operation, TraceContext ids, Instant start, Instant end, Envelope envelope) {
        return new HubSpan(operation, ids, start, end, envelope.id(), envelope.from(), envelope.to(), envelope.kind(),
                Optional.of(envelope.trace().route()), envelope.trace().attempt(),
                envelope.threadId().or(envelope::corrId), Optional.empty());
    }
}
