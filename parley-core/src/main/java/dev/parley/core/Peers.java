package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The nodes a node may send to, and why: every other node put to the same
 * {@link AccessPolicy} decision the {@link Router} enforces, so the answer cannot drift from
 * what a send would meet.
 */
public final class Peers {

    /** One node the caller may reach; {@code grant} is the grant that allows it, if one does. */
    public record Peer(Node node, Route route, Optional<Grant> grant, String reason) {
    }

    /** A short phrase saying why {@code self} may reach {@code target}. */
    private static String reason(Node self, Node target, Route route, Optional<Grant> grant) {
        return switch (route) {
            case INTRA_GROUP -> self.parent().equals(Optional.of(target.id())) ? "your parent (same group)"
                    : target.parent().equals(Optional.of(self.id())) ? "your child (same group)"
                    : "your sibling (same parent)";
            case GRANT -> grant.map(g -> "grant " + g.id() + g.expiresAt().map(e -> " until " + e).orElse("")
                    + (g.note() == null || g.note().isBlank() ? "" : " (" + g.note() + ")")).orElse("a grant");
            default -> route.wire();
        };
    }

    private final Graph graph;
    private final AccessPolicy policy;
    private final InstantSource clock;

    public Peers(Graph graph, AccessPolicy policy, InstantSource clock) {
        this.graph = graph;
        this.policy = policy;
        this.clock = clock;
    }

    /** The caller's own node; the admin sends as none, so has no peers. */
    public Node self(Principal caller) {
        return caller.actingNode(graph, "have peers");
    }

    /** What "may reach" is asked about: an ordinary, empty message (rules on kind or size may still differ). */
    private static final RuleInput.EnvelopeFacts PLAIN_MESSAGE = new RuleInput.EnvelopeFacts(SendRequest.DEFAULT_KIND, 0,
            java.util.Map.of(), "");

    /** Every other node the caller's sends would be allowed to reach now, by id. */
    public List<Peer> of(Principal caller) {
        Node self = self(caller);
        Instant now = clock.instant();
        List<Peer> peers = new ArrayList<>();
        for (Node target : graph.nodes()) {
            if (target.id().equals(self.id())) {
                continue;
            }
            if (policy.decide(self, target, PLAIN_MESSAGE, now) instanceof AclDecision.Allowed allowed) {
                Optional<Grant> grant = Optional.ofNullable(allowed.grantId()).flatMap(graph::grant);
                peers.add(new Peer(target, allowed.route(), grant, reason(self, target, allowed.route(), grant)));
            }
        }
        return peers;
    }
}
