package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * An envelope composed on a sender's behalf, before the {@link PostOffice} decides where it
 * may go and the store gives it a seq. {@code route} names the surface it travels by (a
 * reply, a topic, a broadcast, a task, a hub notice); a direct send has none, and its trace
 * names the route its access decision took. {@code follows} is the trace context of the
 * envelope it answers, whose trace it continues.
 */
record Draft(NodeId from, String kind, Optional<Route> route, Optional<String> topic, Payload payload,
             Optional<TraceContext> follows) {

    /** A node's own envelope to one node, by whatever route the access policy finds. */
    static Draft direct(NodeId from, String kind, Payload payload) {
        return new Draft(from, kind, Optional.empty(), Optional.empty(), payload, Optional.empty());
    }

    /** An envelope that travels by {@code route}. */
    static Draft by(Route route, NodeId from, String kind, Payload payload) {
        return new Draft(from, kind, Optional.of(route), Optional.empty(), payload, Optional.empty());
    }

    /** The envelope to {@code to}. */
    Envelope to(String id, NodeId to, Instant at, Trace trace) {
        return new Envelope(id, 0, from, to, kind, payload.text(), payload.data(), payload.corrId(), payload.threadId(),
                topic, payload.messageId(), payload.meta(), at, trace);
    }

    /**
     * The same draft answering to {@code corrId} (a publication). It goes to many inboxes, so
     * it carries no messageId: a messageId stays unique per sender.
     */
    Draft correlated(String corrId) {
        return new Draft(from, kind, route, topic, new Payload(payload.text(), payload.data(), Optional.of(corrId),
                payload.threadId(), Optional.empty(), payload.meta()), follows);
    }

    /** The same draft continuing the conversation of an envelope with {@code context} (a reply, a task move). */
    Draft following(TraceContext context) {
        return new Draft(from, kind, route, topic, payload, Optional.of(context));
    }

    /** What policy rules see of this envelope. */
    RuleInput.EnvelopeFacts facts() {
        return RuleInput.EnvelopeFacts.of(kind, payload, topic);
    }
}
