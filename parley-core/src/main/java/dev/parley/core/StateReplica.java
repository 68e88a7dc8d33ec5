package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;

/**
 * This hub's copy of the state room: what other gateways publish there (their nodes, grants
 * made anywhere, their nodes' topic subscriptions) is committed to the local store and then put into the {@link Graph}, so
 * the {@link AccessPolicy} decides on a remote node exactly as on a local one. An entry
 * that cannot be read is skipped with an audit entry; the watch goes on.
 */
public final class StateReplica {
    private final Graph graph;
    private final FederationStore federation;
    private final EventStore store;
    private final PolicyRules rules;
    private final InstantSource clock;
    private final String self;
    private final Tokens tokens;

    public StateReplica(Graph graph, Tokens tokens, FederationStore federation, EventStore store, PolicyRules rules,
                        InstantSource clock, String self) {
        this.graph = graph;
        this.tokens = tokens;
        this.federation = federation;
        this.store = store;
        this.rules = rules;
        this.clock = clock;
        this.self = self;
    }

    /**
     * A node entry: mirrored when another gateway owns it and it is not known yet; for a node
     * known here with another owner than before, the ownership move (a fallback took it over)
     * is applied and audited. Answers whether the node moved.
     */
    public boolean node(Node node, String owner) {
        NodeId id = node.id();
        if (graph.isRetired(id)) {
            return false;
        }
        if (graph.node(id).isEmpty()) {
            // This gateway's own entry is an echo of its create, which puts the node in the graph itself.
            if (!owner.equals(self)) {
                federation.mirrorNode(node, owner);
                graph.putRemote(node, owner);
            }
            return false;
        }
        String was = graph.owner(id).orElse(self);
        if (was.equals(owner)) {
            return false;
        }
        Optional<String> to = owner.equals(self) ? Optional.empty() : Optional.of(owner);
        String why = "owner moved from gateway " + was + " to gateway " + owner;
        federation.moveNode(id, to, "node " + id + " moved to gateway " + owner + " before this envelope was"
                + " delivered here", new AuditEntry(clock.instant(), "gateway:" + owner, "node.owner", id.value(),
                AuditEntry.Decision.ALLOW, why, Optional.empty(), rules.version()));
        if (was.equals(self)) {
            tokens.revoke(id); // it speaks through its new owner now
        }
        graph.moveTo(id, to);
        return true;
    }

    /**
     * A node entry marked deleted by its owner: the node is retired here (its id stays taken),
     * also when this gateway knew it under an earlier owner, itself included. A node never
     * mirrored here is left unknown; its entry keeps the id taken.
     */
    public void nodeDeleted(NodeId id, String owner, Instant at) {
        // Its owner here may be an earlier one: the node moved before it was deleted, and KV keeps only the last.
        if (owner.equals(self) || graph.node(id).isEmpty()) {
            return;
        }
        if (graph.owner(id).isEmpty()) {
            tokens.revoke(id);
        }
        store.deleteNode(id, at, new AuditEntry(clock.instant(), "gateway:" + owner, "node.delete", id.value(),
                AuditEntry.Decision.ALLOW, "deleted on gateway " + owner, Optional.empty(), rules.version()));
        graph.retire(id);
    }

    /** A grant entry, made on any gateway. */
    public void grant(Grant grant) {
        if (graph.grant(grant.id()).isPresent()) {
            return;
        }
        federation.mirrorGrant(grant);
        graph.putGrant(grant);
    }

    /** A grant entry deleted: the grant was withdrawn on some gateway. */
    public void grantWithdrawn(String grantId) {
        if (federation.dropGrant(grantId)) {
            graph.removeGrant(grantId);
        }
    }

    /**
     * A subscription entry: mirrored for another gateway's node, so that topic events
     * published here reach it. This gateway's own subscriptions are its store's, never
     * touched from the state room (an echo of an old delete must not undo a new subscribe).
     */
    public void subscription(Subscription subscription) {
        if (!isLocal(subscription.node())) {
            federation.mirrorSubscription(subscription);
        }
    }

    /** A subscription entry deleted: another gateway's node unsubscribed. */
    public void subscriptionWithdrawn(TopicName topic, NodeId node) {
        if (!isLocal(node)) {
            federation.dropSubscription(topic, node);
        }
    }

    private boolean isLocal(NodeId node) {
        return graph.node(node).isPresent() && graph.owner(node).isEmpty();
    }

    /** An entry that does not parse: skipped and audited. */
    public void unreadable(String key, String why) {
        store.audit(new AuditEntry(clock.instant(), "gateway:" + self, "federation.state", key,
                AuditEntry.Decision.DENY, "unreadable state room entry skipped: " + why, Optional.empty(),
                rules.version()));
    }
}
