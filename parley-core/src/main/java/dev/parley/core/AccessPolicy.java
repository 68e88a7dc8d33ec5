package dev.parley.core;

import java.time.Instant;

/**
 * The built-in ACL, checked in a fixed order: self, intra-group (parent and child,
 * siblings), an unexpired grant; anything else is denied.
 */
public final class AccessPolicy {
    /** The version recorded with every decision of this policy. */
    public static final String VERSION = "builtin-acl-1";

    private final Graph graph;

    public AccessPolicy(Graph graph) {
        this.graph = graph;
    }

    public AclDecision decide(Node sender, Node target, Instant now) {
        if (sender.id().equals(target.id())) {
            return new AclDecision.Allowed(Route.SELF, null);
        }
        if (sender.sharesGroupWith(target)) {
            return new AclDecision.Allowed(Route.INTRA_GROUP, null);
        }
        return graph.activeGrant(sender.id(), target.id(), now)
                .<AclDecision>map(g -> new AclDecision.Allowed(Route.GRANT, g.id()))
                .orElseGet(() -> new AclDecision.Denied(
                        sender.id() + " and " + target.id() + " are in different groups and no active grant allows "
                                + sender.id() + " to reach " + target.id()));
    }
}
