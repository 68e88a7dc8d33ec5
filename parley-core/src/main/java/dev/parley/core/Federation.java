package dev.parley.core;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * What the hub asks of the federation it belongs to (the state room and the relay), or
 * {@link #NONE} for a single-host hub. Node ids and grants are claimed in the state room
 * before they are committed locally, so two gateways can never both create one id.
 */
public interface Federation {

    /** This hub's gateway id; empty for a single-host hub. */
    Optional<String> gateway();

    /**
     * Records a new node of this gateway in the state room; throws {@link ErrorCode#NODE_EXISTS}
     * when any gateway already has the id, {@link ErrorCode#UNAVAILABLE} when the state room is
     * out of reach. An id this gateway claimed before but never committed (its local commit
     * failed, e.g. on a full disk) is taken up by a create with the same kind, parent and labels.
     */
    void claim(Node node);

    /**
     * Marks a node of this gateway deleted in the state room, for every gateway: its entry
     * stays (ids are never reused, and a create of the same id keeps failing) with the time
     * of its deletion.
     */
    void retire(Node node, Instant at);

    /** Makes a grant made here known to every gateway. */
    void share(Grant grant);

    /** Withdraws a grant from every gateway. */
    void withdraw(String grantId);

    /** Makes a subscription of a node of this gateway known to every gateway, so that publishers anywhere reach it. */
    void subscribed(Subscription subscription);

    /** Withdraws a subscription of a node of this gateway from every gateway. */
    void unsubscribed(TopicName topic, NodeId node);

    /** Whether envelopes for other gateways are spooling (NATS out of reach) rather than flowing. */
    boolean spooling();

    /**
     * Sets, by compare-and-set on the node's state room entry, the gateways that take a node of
     * this gateway over (in order) when this gateway is gone. Throws {@link ErrorCode#INVALID_REQUEST}
     * for an unknown or repeated gateway or this one, {@link ErrorCode#NOT_FOUND} on a single-host hub.
     */
    Routing route(Node node, List<String> fallbacks);

    /** The node's routing as the state room has it; empty on a single-host hub or for a node not in it. */
    Optional<Routing> routing(NodeId node);

    /**
     * Why no gateway can take mail for {@code node} now, if none can: its owner has been gone
     * longer than presence lasts and so has every one of its fallbacks. Empty while its owner or
     * a fallback is present, for a node with no fallbacks (its owner is waited for), and on a
     * single-host hub.
     */
    Optional<String> unowned(NodeId node);

    Federation NONE = new Federation() {
        @Override
        public Optional<String> gateway() {
            return Optional.empty();
        }

        @Override
        public void claim(Node node) {
        }

        @Override
        public void retire(Node node, Instant at) {
        }

        @Override
        public void share(Grant grant) {
        }

        @Override
        public void withdraw(String grantId) {
        }

        @Override
        public void subscribed(Subscription subscription) {
        }

        @Override
        public void unsubscribed(TopicName topic, NodeId node) {
        }

        @Override
        public boolean spooling() {
            return false;
        }

        @Override
        public Routing route(Node node, List<String> fallbacks) {
            throw new ParleyException(ErrorCode.NOT_FOUND, "this hub is not a gateway: it runs without --gateway and"
                    + " --nats, so its nodes have no fallback gateways");
        }

        @Override
        public Optional<Routing> routing(NodeId node) {
            return Optional.empty();
        }

        @Override
        public Optional<String> unowned(NodeId node) {
            return Optional.empty();
        }
    };
}
