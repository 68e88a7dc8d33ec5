package dev.parley.core;

import java.time.InstantSource;
import java.util.List;
import java.util.Optional;

/**
 * Direct sends and replies: establishes the sender from the principal (never from the
 * body) and hands the envelope to the {@link PostOffice}, which decides, audits, checks the
 * schema and appends it.
 */
public final class Router {
    private final Graph graph;
    private final PostOffice office;
    private final EventStore store;
    private final InstantSource clock;
    private final Federation federation;

    public Router(Graph graph, AccessPolicy policy, PayloadSchemas schemas, EventStore store, InstantSource clock,
                  IdGenerator ids) {
        this(graph, policy, schemas, store, clock, ids, Federation.NONE);
    }

    /**
     * A router whose sends to nodes of other gateways are committed here with their mark to
     * publish (the store does that for every envelope whose target another gateway owns);
     * their answer says whether the relay is spooling.
     */
    public Router(Graph graph, AccessPolicy policy, PayloadSchemas schemas, EventStore store, InstantSource clock,
                  IdGenerator ids, Federation federation) {
        this.federation = federation;
        this.graph = graph;
        this.office = new PostOffice(graph, policy, schemas, ids);
        this.store = store;
        this.clock = clock;
    }

    public Appended send(Principal caller, SendRequest request) {
        Node sender = request.sender(caller, graph);
        Actor actor = Actor.of(caller, "send", clock.instant());
        return office.send(actor, sender, request.to(), Draft.direct(sender.id(), request.kind(), request.payload()),
                Optional.empty(), store, (envelope, audit) -> store.append(envelope, audit, Optional.empty(),
                        request.replyWithin().map(actor.at()::plus))).spooled(federation.spooling());
    }

    /**
     * Many direct sends of the caller in one transaction (a batch): each item is decided,
     * audited and checked as {@link #send} does it, and fails by itself (a {@code from} that
     * is not the caller, a refusal, a schema violation); the allowed ones commit together.
     * Answers in the order of {@code requests}.
     */
    public List<SendOutcome> sendAll(Principal caller, List<SendRequest> requests) {
        Node sender = caller.actingNode(graph, "send");
        Actor actor = Actor.of(caller, "send", clock.instant());
        List<PostOffice.Item> items = requests.stream().map(request -> new PostOffice.Item(request.to(),
                Draft.direct(sender.id(), request.kind(), request.payload()),
                request.replyWithin().map(actor.at()::plus), request.claimedBy(sender))).toList();
        boolean spooling = federation.spooling();
        return office.sendAll(actor, sender, items, store).stream().<SendOutcome>map(outcome -> switch (outcome) {
            case SendOutcome.Sent sent -> new SendOutcome.Sent(sent.appended().spooled(spooling));
            case SendOutcome.Refused refused -> refused;
        }).toList();
    }

    /**
     * The receiver of {@code originalId} answers its sender. A reply needs no grant: the
     * original sender opened the conversation.
     */
    public Appended reply(Principal caller, String originalId, Payload payload) {
        Node replier = caller.actingNode(graph, "reply");
        MessageRecord original = Messages.visible(store, caller, originalId);
        if (!original.envelope().to().equals(replier.id())) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the receiver may reply to " + originalId);
        }
        NodeId to = original.envelope().from();
        Actor actor = Actor.of(caller, "reply", clock.instant());
        if (graph.node(to).isEmpty()) {
            throw office.refuse(actor, to.value(), "original sender no longer exists", store, Registry.notFound(to));
        }
        Payload threaded = new Payload(payload.text(), payload.data(), Optional.of(originalId),
                payload.threadId().or(() -> original.envelope().threadId()), payload.messageId(), payload.meta());
        return office.answer(actor, to, Draft.by(Route.REPLY, replier.id(), "reply", threaded)
                        .following(original.envelope().trace().context()), "reply to " + originalId,
                (envelope, audit) -> store.append(envelope, audit, Optional.of(originalId), Optional.empty()))
                .spooled(federation.spooling());
    }
}
