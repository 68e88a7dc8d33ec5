package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * An envelope the hub composes on a node's behalf (topic events, broadcasts, task notices)
 * before the store gives it a seq. Such envelopes never carry the sender's messageId: one
 * draft may go to many inboxes, and the messageId must stay unique per sender.
 */
record Draft(NodeId from, String kind, Route route, Optional<String> topic, Payload payload) {

    /** The envelope to {@code to}, decided under {@code policyVersion} (by {@code rule}, when a policy rule allowed it). */
    Envelope to(String id, NodeId to, Instant at, String policyVersion, Optional<String> rule) {
        return new Envelope(id, 0, from, to, kind, payload.text(), payload.data(), payload.corrId(), payload.threadId(),
                topic, Optional.empty(), payload.meta(), at, new Trace(1, route, policyVersion, rule));
    }

    /** The same draft answering to {@code corrId} (a publication or a task). */
    Draft correlated(String corrId) {
        return new Draft(from, kind, route, topic, new Payload(payload.text(), payload.data(), Optional.of(corrId),
                payload.threadId(), Optional.empty(), payload.meta()));
    }
}
