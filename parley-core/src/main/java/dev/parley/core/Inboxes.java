package dev.parley.core;

import java.time.InstantSource;
import java.util.List;

/**
 * Reading inboxes, whatever the surface (SSE, polls, MCP): whose inbox a caller may read and
 * as what, pages after a cursor, the replay of a cursor-less stream, and the delivery marks
 * of what the node itself was given. Only the node's own reads take delivery
 * ({@link InboxReader}); the admin may look at any inbox, changing nothing.
 */
public final class Inboxes {

    /** One inbox as one reader may read it; handed out only by {@link #own} and {@link #of}. */
    public static final class Inbox {
        private final NodeId node;
        private final InboxReader reader;

        private Inbox(NodeId node, InboxReader reader) {
            this.node = node;
            this.reader = reader;
        }

        public NodeId node() {
            return node;
        }

        public InboxReader reader() {
            return reader;
        }
    }

    /** Envelopes after a cursor, and the cursor to ask from next (the last seq, or the same cursor). */
    public record Page(List<Envelope> items, long next) {
    }

    private final EventStore store;
    private final DeliveryPolicies policies;
    private final Registry registry;
    private final InstantSource clock;

    public Inboxes(EventStore store, DeliveryPolicies policies, Registry registry, InstantSource clock) {
        this.store = store;
        this.policies = policies;
        this.registry = registry;
        this.clock = clock;
    }

    /** The caller's own inbox, whose reads take delivery. */
    public Inbox own(Principal caller) {
        return switch (caller) {
            case Principal.Caller c -> new Inbox(c.id(), InboxReader.OWNER);
            case Principal.Admin a -> throw new ParleyException(ErrorCode.FORBIDDEN,
                    "the admin has no inbox; use /v1/nodes/{id}/inbox");
        };
    }

    /**
     * Any node's inbox, for the admin, who only looks. A deleted node's inbox can still be read.
     *
     * @param node the id as the caller gave it, checked only once the caller may look at all
     */
    public Inbox of(Principal caller, String node) {
        if (!(caller instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may read another node's inbox; use /v1/inbox");
        }
        NodeId id = NodeId.of(node);
        if (!registry.known(id)) {
            throw Registry.notFound(id);
        }
        return new Inbox(id, InboxReader.OBSERVER);
    }

    /**
     * One page for a client that polls. The owner's page is marked delivered before it is
     * returned, so the states it reads next are already true. On a full disk the page is
     * still answered (reads go on) while the store can keep its marks until writes work
     * again ({@link EventStore#markDeliveredNow}): they are recorded late, not lost.
     */
    public Page page(Inbox inbox, long after, int limit) {
        List<Envelope> items = store.inboxAfter(inbox.node, after, limit);
        if (inbox.reader.takesDelivery()) {
            store.markDeliveredNow(items, clock.instant(), policies.of(inbox.node).redeliverAfter());
        }
        return new Page(items, items.isEmpty() ? after : items.getLast().seq());
    }

    /** Envelopes with seq greater than {@code after}, in order, marking nothing (a stream marks what it wrote). */
    public List<Envelope> after(Inbox inbox, long after, int limit) {
        return store.inboxAfter(inbox.node, after, limit);
    }

    /** The next page of what {@code replay} selects after {@code after}. */
    public List<Envelope> replay(Inbox inbox, Replay replay, long after, int limit) {
        return replay.page(store, inbox.node, after, limit);
    }

    /** The highest seq committed to the inbox, 0 when empty. */
    public long head(Inbox inbox) {
        return store.headSeq(inbox.node);
    }

    /** The inbox at a glance (the console's Inboxes view); marks nothing. */
    public InboxSummary summary(Inbox inbox) {
        return store.inboxSummary(inbox.node);
    }

    /**
     * A stream wrote {@code written}: for the owner they are delivered (marks of many streams
     * are gathered into one write), and an ack check follows when the node's policy asks for one.
     * Should the inbox's marks wait for the store ({@link EventStore#markDelivered}), this runs
     * {@code whileWaiting} meanwhile.
     */
    public void delivered(Inbox inbox, List<Envelope> written, Runnable whileWaiting) {
        if (inbox.reader.takesDelivery()) {
            store.markDelivered(written, clock.instant(), policies.of(inbox.node).redeliverAfter(), whileWaiting);
        }
    }
}
