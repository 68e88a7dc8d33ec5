package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;

/**
 * The one enforcement point for envelopes: establishes the sender from the principal,
 * applies the ACL, writes the decision to the audit log, and appends what is allowed.
 * Every surface sends through here.
 */
public final class Router {
    private final Graph graph;
    private final AccessPolicy policy;
    private final EventStore store;
    private final InstantSource clock;
    private final IdGenerator ids;

    public Router(Graph graph, AccessPolicy policy, EventStore store, InstantSource clock, IdGenerator ids) {
        this.graph = graph;
        this.policy = policy;
        this.store = store;
        this.clock = clock;
        this.ids = ids;
    }

    public Appended send(Principal caller, SendRequest request) {
        Node sender = senderOf(caller, "send");
        if (request.claimedFrom().isPresent() && !request.claimedFrom().get().equals(sender.id().value())) {
            throw new ParleyException(ErrorCode.IDENTITY_MISMATCH,
                    "from must be the caller (" + sender.id() + ") or absent");
        }
        Instant now = clock.instant();
        Optional<Node> target = graph.node(request.to());
        if (target.isEmpty()) {
            store.audit(entry(now, sender, "send", request.to().value(), AuditEntry.Decision.DENY,
                    "target node does not exist", Optional.empty()));
            throw Registry.notFound(request.to());
        }
        return switch (policy.decide(sender, target.get(), now)) {
            case AclDecision.Denied denied -> {
                store.audit(entry(now, sender, "send", request.to().value(), AuditEntry.Decision.DENY, denied.reason(),
                        Optional.empty()));
                throw new ParleyException(ErrorCode.ACL_DENIED, "acl denied: " + denied.reason(),
                        Map.of("reason", denied.reason()));
            }
            case AclDecision.Allowed allowed -> {
                Envelope draft = draft(sender.id(), request.to(), request.kind(), request.payload(), now, allowed.route());
                String why = allowed.grantId() == null ? allowed.route().wire() : "grant " + allowed.grantId();
                yield store.append(draft, entry(now, sender, "send", request.to().value(), AuditEntry.Decision.ALLOW, why,
                        Optional.of(draft.id())), Optional.empty(), request.replyWithin().map(now::plus));
            }
        };
    }

    /**
     * The receiver of {@code originalId} answers its sender. A reply needs no grant: the
     * original sender opened the conversation.
     */
    public Appended reply(Principal caller, String originalId, Payload payload) {
        Node replier = senderOf(caller, "reply");
        MessageRecord original = store.message(originalId).orElseThrow(() -> Messages.notFound(originalId));
        if (!original.envelope().to().equals(replier.id())) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the receiver may reply to " + originalId);
        }
        NodeId to = original.envelope().from();
        Instant now = clock.instant();
        if (graph.node(to).isEmpty()) {
            store.audit(entry(now, replier, "reply", to.value(), AuditEntry.Decision.DENY,
                    "original sender no longer exists", Optional.empty()));
            throw Registry.notFound(to);
        }
        Payload threaded = new Payload(payload.text(), payload.data(), Optional.of(originalId),
                payload.threadId().or(() -> original.envelope().threadId()), payload.messageId(), payload.meta());
        Envelope draft = draft(replier.id(), to, "reply", threaded, now, Route.REPLY);
        return store.append(draft, entry(now, replier, "reply", to.value(), AuditEntry.Decision.ALLOW,
                "reply to " + originalId, Optional.of(draft.id())), Optional.of(originalId), Optional.empty());
    }

    private Node senderOf(Principal caller, String action) {
        return switch (caller) {
            case Principal.Admin a -> throw new ParleyException(ErrorCode.FORBIDDEN,
                    "the admin token cannot " + action + "; use the token of the node that sends");
            case Principal.Caller c -> graph.node(c.id()).orElseThrow(() -> new ParleyException(
                    ErrorCode.UNAUTHORIZED, "the node of this token no longer exists"));
        };
    }

    private Envelope draft(NodeId from, NodeId to, String kind, Payload payload, Instant now, Route route) {
        return new Envelope(ids.next(), 0, from, to, kind, payload.text(), payload.data(), payload.corrId(),
                payload.threadId(), Optional.empty(), payload.messageId(), payload.meta(), now, new Trace(1, route, AccessPolicy.VERSION));
    }

    private static AuditEntry entry(Instant at, Node actor, String action, String target, AuditEntry.Decision decision,
                                    String reason, Optional<String> envelopeId) {
        return new AuditEntry(at, actor.id().value(), action, target, decision, reason, envelopeId, AccessPolicy.VERSION);
    }
}
