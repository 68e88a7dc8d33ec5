package dev.parley.server.delivery;

import dev.parley.core.Envelope;

import java.util.Map;
import java.util.Optional;

/**
 * How a push is written when its body is not the envelope itself: an adapter claims the
 * envelopes it composed (by kind) and gives the body, its media type and extra headers. The
 * courier still adds {@code Parley-Event-Id}, {@code Parley-Attempt} and the signature of
 * that body, and the dispatcher still schedules, retries and dead-letters it.
 */
public interface PushForm {
    Optional<Outbound> of(Envelope envelope);

    record Outbound(byte[] body, String contentType, Map<String, String> headers) {
        public Outbound {
            headers = Map.copyOf(headers);
        }
    }
}
