package dev.parley.core;

import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Broadcasts: one payload to every live node a filter selects, in one transaction. The
 * admin reaches anyone, as the hub ({@link NodeId#HUB}); a node reaches only its own
 * groups, the one it belongs to (its parent and siblings) and the one it leads (its
 * children), and never itself. Policy rules that deny apply to each recipient as to any
 * send (the admin broadcasts as the sender {@code parley} of kind {@code hub}); rules that
 * allow cannot widen a broadcast beyond its group.
 *
 * <p>On a gateway of a federation, a node's broadcast reaches its groups' members on every
 * gateway (each receiving gateway checks the group again); the admin is its own gateway's,
 * so an admin broadcast reaches only this gateway's nodes.
 */
public final class Broadcasts {
    /** The kind of the envelopes a broadcast produces. */
    public static final String KIND = "broadcast";
    private static final String TARGET = "broadcast";

    private final Graph graph;
    private final PostOffice office;
    private final FanoutStore store;
    private final EventStore audit;
    private final InstantSource clock;

    /** {@code audit} records refusals that write nothing else. */
    public Broadcasts(Graph graph, AccessPolicy policy, PayloadSchemas schemas, FanoutStore store, EventStore audit,
                      InstantSource clock, IdGenerator ids) {
        this.graph = graph;
        this.office = new PostOffice(graph, policy, schemas, ids);
        this.store = store;
        this.audit = audit;
        this.clock = clock;
    }

    public Publication broadcast(Principal caller, BroadcastFilter filter, Payload payload) {
        Actor actor = Actor.of(caller, "broadcast", clock.instant());
        return switch (caller) {
            case Principal.Admin a -> {
                Stream<NodeId> reach = filter.group()
                        .map(g -> graph.groupLedBy(graph.node(g).orElseThrow(() -> Registry.notFound(g)).id()).stream())
                        .orElseGet(() -> graph.nodes().stream().map(Node::id))
                        .filter(id -> graph.owner(id).isEmpty());
                yield send(actor, NodeId.HUB, RuleInput.Party.hub(), reach, filter, "admin broadcast", payload);
            }
            case Principal.Caller c -> {
                Node sender = caller.actingNode(graph, "broadcast");
                // The group it belongs to (led by its parent; a root's own) and the group it leads.
                List<NodeId> ownGroups = Stream.of(sender.parent().orElse(sender.id()), sender.id()).distinct().toList();
                if (filter.group().isPresent() && !ownGroups.contains(filter.group().get())) {
                    String reason = "a node may broadcast only to its own group: " + sender.parent().map(p -> p + " or ")
                            .orElse("") + sender.id();
                    throw office.refuse(actor, "group:" + filter.group().get(), reason, audit,
                            new ParleyException(ErrorCode.FORBIDDEN, reason));
                }
                Stream<NodeId> reach = filter.group().map(List::of).orElse(ownGroups).stream()
                        .flatMap(g -> graph.groupLedBy(g).stream())
                        .filter(id -> !id.equals(sender.id()));
                yield send(actor, sender.id(), RuleInput.Party.of(sender, graph), reach, filter, "own group", payload);
            }
        };
    }

    /** The broadcast's group is its reach: the rules may refuse a recipient, never add one. */
    private Publication send(Actor actor, NodeId from, RuleInput.Party sender, Stream<NodeId> reach,
                             BroadcastFilter filter, String why, Payload payload) {
        List<Node> selected = reach.distinct().sorted()
                .flatMap(id -> graph.node(id).stream()) // a group's leader may have been deleted
                .filter(filter::matches)
                .toList();
        return office.publish(actor, TARGET, sender, selected, Draft.by(Route.BROADCAST, from, KIND, payload),
                (check, target) -> check.allowed(Route.BROADCAST, null), Optional.of(why), store);
    }
}
