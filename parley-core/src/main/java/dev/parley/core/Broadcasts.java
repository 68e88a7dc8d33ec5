package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Broadcasts: one payload to every live node a filter selects, in one transaction. The
 * admin reaches anyone, as the hub ({@link NodeId#HUB}); a node reaches only its own
 * groups, the one it belongs to (its parent and siblings) and the one it leads (its
 * children), and never itself.
 */
public final class Broadcasts {
    /** The kind of the envelopes a broadcast produces. */
    public static final String KIND = "broadcast";
    private static final String TARGET = "broadcast";

    private final Graph graph;
    private final EventStore audit;
    private final Fanout fanout;
    private final InstantSource clock;

    /** {@code audit} records refusals that write nothing else. */
    public Broadcasts(Graph graph, FanoutStore store, EventStore audit, InstantSource clock, IdGenerator ids) {
        this.graph = graph;
        this.audit = audit;
        this.fanout = new Fanout(store, ids);
        this.clock = clock;
    }

    public Publication broadcast(Principal caller, BroadcastFilter filter, Payload payload) {
        Instant now = clock.instant();
        Actor actor = Actor.of(caller, "broadcast", now);
        return switch (caller) {
            case Principal.Admin a -> {
                Stream<NodeId> reach = filter.group()
                        .map(g -> graph.groupLedBy(graph.node(g).orElseThrow(() -> Registry.notFound(g)).id()).stream())
                        .orElseGet(() -> graph.nodes().stream().map(Node::id));
                yield send(actor, NodeId.HUB, reach, filter, "admin broadcast", payload);
            }
            case Principal.Caller c -> {
                Node sender = Actor.node(graph, caller, "broadcast");
                // The group it belongs to (led by its parent; a root's own) and the group it leads.
                List<NodeId> ownGroups = Stream.of(sender.parent().orElse(sender.id()), sender.id()).distinct().toList();
                if (filter.group().isPresent() && !ownGroups.contains(filter.group().get())) {
                    String reason = "a node may broadcast only to its own group: " + sender.parent().map(p -> p + " or ")
                            .orElse("") + sender.id();
                    audit.audit(actor.deny("group:" + filter.group().get(), reason));
                    throw new ParleyException(ErrorCode.FORBIDDEN, reason);
                }
                Stream<NodeId> reach = filter.group().map(List::of).orElse(ownGroups).stream()
                        .flatMap(g -> graph.groupLedBy(g).stream())
                        .filter(id -> !id.equals(sender.id()));
                yield send(actor, sender.id(), reach, filter, "own group", payload);
            }
        };
    }

    private Publication send(Actor actor, NodeId from, Stream<NodeId> reach, BroadcastFilter filter, String why,
                             Payload payload) {
        List<Fanout.Recipient> recipients = reach.distinct().sorted()
                .flatMap(id -> graph.node(id).stream()) // a group's leader may have been deleted
                .filter(filter::matches)
                .map(n -> new Fanout.Recipient(n.id(), why))
                .toList();
        return fanout.publish(actor, TARGET, new Draft(from, KIND, Route.BROADCAST, Optional.empty(), payload),
                recipients, List.of());
    }
}
