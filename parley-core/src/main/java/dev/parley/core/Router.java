package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;

/**
 * The one enforcement point for envelopes: establishes the sender from the principal,
 * applies the access policy (policy rules around the ACL), writes the decision to the
 * audit log, checks the payload against the schema of its kind, and appends what is
 * allowed. Every surface sends through here.
 */
public final class Router {
    private final Graph graph;
    private final AccessPolicy policy;
    private final PayloadSchemas schemas;
    private final EventStore store;
    private final InstantSource clock;
    private final IdGenerator ids;

    public Router(Graph graph, AccessPolicy policy, PayloadSchemas schemas, EventStore store, InstantSource clock,
                  IdGenerator ids) {
        this.graph = graph;
        this.policy = policy;
        this.schemas = schemas;
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
        Actor actor = new Actor(sender.id().value(), "send", clock.instant());
        Optional<Node> target = graph.node(request.to());
        if (target.isEmpty()) {
            store.audit(actor.deny(request.to().value(), "target node does not exist", policy.version()));
            throw Registry.notFound(request.to());
        }
        RuleInput.EnvelopeFacts facts = RuleInput.EnvelopeFacts.of(request.kind(), request.payload(), Optional.empty());
        return switch (policy.decide(sender, target.get(), facts, actor.at())) {
            case AclDecision.Denied denied -> {
                store.audit(actor.deny(request.to().value(), denied));
                throw Actor.refusal(denied);
            }
            case AclDecision.Allowed allowed -> {
                schemas.check(request.kind(), request.payload().data());
                Envelope draft = draft(sender.id(), request.to(), request.kind(), request.payload(), actor.at(),
                        new Trace(1, allowed.route(), allowed.policyVersion(), allowed.rule()));
                yield store.append(draft, actor.allow(request.to().value(), allowed, Optional.of(draft.id())),
                        Optional.empty(), request.replyWithin().map(actor.at()::plus));
            }
        };
    }

    /**
     * The receiver of {@code originalId} answers its sender. A reply needs no grant: the
     * original sender opened the conversation.
     */
    public Appended reply(Principal caller, String originalId, Payload payload) {
        Node replier = senderOf(caller, "reply");
        MessageRecord original = Messages.visible(store, caller, originalId);
        if (!original.envelope().to().equals(replier.id())) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the receiver may reply to " + originalId);
        }
        NodeId to = original.envelope().from();
        Actor actor = new Actor(replier.id().value(), "reply", clock.instant());
        String version = policy.version();
        if (graph.node(to).isEmpty()) {
            store.audit(actor.deny(to.value(), "original sender no longer exists", version));
            throw Registry.notFound(to);
        }
        schemas.check("reply", payload.data());
        Payload threaded = new Payload(payload.text(), payload.data(), Optional.of(originalId),
                payload.threadId().or(() -> original.envelope().threadId()), payload.messageId(), payload.meta());
        Envelope draft = draft(replier.id(), to, "reply", threaded, actor.at(), new Trace(1, Route.REPLY, version));
        return store.append(draft, actor.allow(to.value(), "reply to " + originalId, Optional.of(draft.id()), version,
                Optional.empty()), Optional.of(originalId), Optional.empty());
    }

    private Node senderOf(Principal caller, String action) {
        return switch (caller) {
            case Principal.Admin a -> throw new ParleyException(ErrorCode.FORBIDDEN,
                    "the admin token cannot " + action + "; use the token of the node that sends");
            case Principal.Caller c -> graph.node(c.id()).orElseThrow(() -> new ParleyException(
                    ErrorCode.UNAUTHORIZED, "the node of this token no longer exists"));
        };
    }

    private Envelope draft(NodeId from, NodeId to, String kind, Payload payload, Instant now, Trace trace) {
        return new Envelope(ids.next(), 0, from, to, kind, payload.text(), payload.data(), payload.corrId(),
                payload.threadId(), Optional.empty(), payload.messageId(), payload.meta(), now, trace);
    }
}
