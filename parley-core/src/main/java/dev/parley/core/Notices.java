package dev.parley.core;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * Envelopes the hub itself sends to a sender about its envelope: dead letters and missed
 * deadlines. They need no access decision (the hub answers the sender) and are committed
 * with the delivery change that causes them, so they do not go through the {@link PostOffice}.
 */
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

    /** Brings an approval card to its approver: {@code content} says what it asks and how to answer. */
    public Envelope approvalCard(NodeId approver, Payload content, Instant at) {
        return Draft.by(Route.SYSTEM, NodeId.HUB, ApprovalCard.ENVELOPE_KIND, content).to(ids.next(), approver, at,
                new Trace(1, Route.SYSTEM, rules.version()));
    }

    /** Tells a capability's owner of a review its capability's misfire raised; {@code data} is the review's view. */
    public Envelope skillReview(SkillReview review, JsonText data) {
        Payload payload = new Payload(Optional.of("capability " + review.capabilityId() + " misfired ("
                + review.failure().wire() + "): " + review.detail()), Optional.of(data), Optional.of(review.id()),
                Optional.empty(), Optional.empty(), Map.of());
        return Draft.by(Route.SYSTEM, NodeId.HUB, SkillReview.KIND, payload).to(ids.next(), review.owner(),
                review.raisedAt(), new Trace(1, Route.SYSTEM, rules.version()));
    }

    private Envelope notice(Envelope about, String kind, String text, String data, Instant at) {
        Payload payload = new Payload(Optional.of(text), Optional.of(new JsonText(data)), Optional.of(about.id()),
                about.threadId(), Optional.empty(), Map.of());
        return Draft.by(Route.SYSTEM, NodeId.HUB, kind, payload).to(ids.next(), about.from(), at,
                new Trace(1, Route.SYSTEM, rules.version(), Optional.empty(), about.trace().context().child()));
    }
}
