package dev.parley.core;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** Envelopes the hub itself sends to a sender about its envelope: dead letters and missed deadlines. */
public final class Notices {
    private final IdGenerator ids;
    private final PolicyRules rules;

    public Notices(IdGenerator ids, PolicyRules rules) {
        this.ids = ids;
        this.rules = rules;
    }

    /** Tells the sender its envelope was dead-lettered; none for the hub's own notices. */
    public Optional<Envelope> deadLetter(Envelope lost, String reason, int attempts, Instant at) {
        if (lost.from().equals(NodeId.HUB)) {
            return Optional.empty();
        }
        String data = "{\"envelopeId\":\"" + lost.id() + "\",\"to\":\"" + lost.to() + "\",\"attempts\":" + attempts + "}";
        return Optional.of(notice(lost, "dead_letter", "envelope " + lost.id() + " to " + lost.to()
                + " was dead-lettered after " + attempts + " attempt(s): " + reason, data, at));
    }

    /** Tells the sender that no reply or processed ack came in time. */
    public Envelope incident(Envelope request, long withinMs, Instant at) {
        String data = "{\"envelopeId\":\"" + request.id() + "\",\"to\":\"" + request.to() + "\",\"replyWithinMs\":"
                + withinMs + "}";
        return notice(request, "incident", request.to() + " did not reply to or process envelope " + request.id()
                + " within " + withinMs + " ms", data, at);
    }

    private Envelope notice(Envelope about, String kind, String text, String data, Instant at) {
        return new Envelope(ids.next(), 0, NodeId.HUB, about.from(), kind, Optional.of(text),
                Optional.of(new JsonText(data)), Optional.of(about.id()), about.threadId(), Optional.empty(),
                Optional.empty(), Map.of(), at, new Trace(1, Route.SYSTEM, rules.version()));
    }
}
