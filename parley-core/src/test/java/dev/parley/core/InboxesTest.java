package dev.parley.core;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static dev.parley.core.MemoryHub.ADMIN;
import static dev.parley.core.MemoryHub.as;
import static dev.parley.core.MemoryHub.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Who may read which inbox, and which reads take delivery. */
class InboxesTest {
    private static final Duration ACK_WITHIN = Duration.ofSeconds(30);

    private final MemoryHub hub = new MemoryHub();
    private final MemoryStore store = hub.store;
    private final Router router = new Router(hub.graph, hub.policy, PayloadSchemas.NONE, store, hub.clock, hub.ids);
    private final DeliveryPolicies policies = new DeliveryPolicies(store, hub.graph, hub.rules, hub.clock);
    private final Inboxes inboxes = new Inboxes(store, policies, hub.registry, hub.clock);

    /** lead → a1, a2; a2 wants an ack within 30 s of delivery. */
    @BeforeEach
    void lineage() {
        hub.node("lead", null);
        hub.node("a1", "lead");
        hub.node("a2", "lead");
        policies.put(ADMIN, NodeId.of("a2"), new DeliveryPolicy(Optional.empty(), RetryPolicy.DEFAULT,
                Optional.of(ACK_WITHIN)));
    }

    @Test
    void theOwnersPollIsMarkedDeliveredBeforeItIsAnswered() {
        Envelope first = send("a1", "a2", "one");
        Envelope second = send("a1", "a2", "two");
        send("a2", "a1", "not a2's");

        Inboxes.Inbox own = inboxes.own(as("a2"));
        Inboxes.Page page = inboxes.page(own, 0, 1);

        assertEquals(List.of(first), page.items());
        assertEquals(first.seq(), page.next());
        assertEquals(DeliveryState.DELIVERED, store.state(first.id()), "true before the next read");
        assertEquals(Optional.of(MemoryHub.START.plus(ACK_WITHIN)), store.ackCheck(first.id()));
        assertEquals(DeliveryState.ACCEPTED, store.state(second.id()), "beyond the page");
        assertEquals(List.of(second), inboxes.page(own, page.next(), 10).items());
    }

    /** Reads go on when the disk is full: the page is answered, and its marks wait for writes to work again. */
    @Test
    void aPollOnAFullDiskIsAnsweredAndItsMarksAreRecordedOnceWritesWork() {
        Envelope sent = send("a1", "a2", "one");
        Inboxes.Inbox own = inboxes.own(as("a2"));
        store.full = true;
        assertEquals(List.of(sent), inboxes.page(own, 0, 10).items());
        assertEquals(DeliveryState.ACCEPTED, store.state(sent.id()), "not recorded while the disk is full");
        store.full = false;
        store.commitMarks(); // the batched path's next commit, once writes work
        assertEquals(DeliveryState.DELIVERED, store.state(sent.id()), "recorded late, not lost");
        assertEquals(Optional.of(MemoryHub.START.plus(ACK_WITHIN)), store.ackCheck(sent.id()));
    }

    @Test
    void anEmptyPageKeepsTheCursor() {
        assertEquals(new Inboxes.Page(List.of(), 7), inboxes.page(inboxes.own(as("a1")), 7, 10));
    }

    @Test
    void theAdminLooksAtAnyInboxAndChangesNothing() {
        Envelope sent = send("a1", "a2", "hi");
        Inboxes.Inbox looked = inboxes.of(ADMIN, "a2");

        assertEquals(InboxReader.OBSERVER, looked.reader());
        assertEquals(List.of(sent), inboxes.page(looked, 0, 10).items());
        inboxes.delivered(looked, List.of(sent), () -> { });
        store.commitMarks();
        assertEquals(DeliveryState.ACCEPTED, store.state(sent.id()));
        assertEquals(List.of(sent), inboxes.replay(inboxes.own(as("a2")), Replay.UNDELIVERED, 0, 10),
                "the node's own stream still replays it");
    }

    @Test
    void aDeletedNodesInboxCanStillBeReadByTheAdmin() {
        Envelope sent = send("a1", "a2", "hi");
        hub.registry.delete(ADMIN, NodeId.of("a2"));

        assertEquals(List.of(sent), inboxes.page(inboxes.of(ADMIN, "a2"), 0, 10).items());
    }

    @Test
    void onlyTheAdminReadsAnotherNodesInboxAndTheAdminHasNoneOfItsOwn() {
        assertRefused(ErrorCode.FORBIDDEN, () -> inboxes.of(as("a1"), "a2"));
        assertRefused(ErrorCode.FORBIDDEN, () -> inboxes.of(as("a1"), "a1"));
        assertRefused(ErrorCode.FORBIDDEN, () -> inboxes.own(ADMIN));
        assertRefused(ErrorCode.NODE_NOT_FOUND, () -> inboxes.of(ADMIN, "nobody"));
        assertRefused(ErrorCode.FORBIDDEN, () -> inboxes.of(as("a1"), "Not An Id!"));
        assertRefused(ErrorCode.INVALID_NODE_ID, () -> inboxes.of(ADMIN, "Not An Id!"));
    }

    @Test
    void whatTheOwnersStreamWroteIsMarkedDeliveredWithTheNextBatchOfMarks() {
        Envelope sent = send("a1", "a2", "hi");
        Inboxes.Inbox own = inboxes.own(as("a2"));

        inboxes.delivered(own, inboxes.after(own, 0, 10), () -> { });
        assertEquals(DeliveryState.ACCEPTED, store.state(sent.id()), "stream marks are gathered, not waited for");
        store.commitMarks();
        assertEquals(DeliveryState.DELIVERED, store.state(sent.id()));
        assertEquals(Optional.of(MemoryHub.START.plus(ACK_WITHIN)), store.ackCheck(sent.id()));
    }

    @Test
    void aReplayOfUndeliveredSkipsWhatWasDeliveredAndOneOfUnackedSkipsOnlyWhatIsSettled() {
        Envelope delivered = send("a1", "a2", "delivered");
        Envelope answered = send("a1", "a2", "answered");
        Envelope waiting = send("a1", "a2", "waiting");
        Inboxes.Inbox own = inboxes.own(as("a2"));
        inboxes.page(own, 0, 1);
        router.reply(as("a2"), answered.id(), text("done"));

        assertEquals(List.of(answered, waiting), inboxes.replay(own, Replay.UNDELIVERED, 0, 10));
        assertEquals(List.of(delivered, waiting), inboxes.replay(own, Replay.UNACKED, 0, 10));
        assertEquals(List.of(waiting), inboxes.replay(own, Replay.UNACKED, delivered.seq(), 10));
        assertEquals(waiting.seq(), inboxes.head(own));
        assertEquals(0, inboxes.head(inboxes.of(ADMIN, "lead")));
    }

    @Test
    void replayIsParsedFromItsWireName() {
        assertEquals(Replay.UNACKED, Replay.parse(" unacked "));
        ParleyException e = assertThrows(ParleyException.class, () -> Replay.parse("all"));
        assertEquals(ErrorCode.INVALID_REPLAY, e.code());
        assertEquals("replay must be one of undelivered, unacked, not 'all'", e.getMessage());
    }

    private Envelope send(String from, String to, String text) {
        return router.send(as(from), new SendRequest(NodeId.of(to), SendRequest.DEFAULT_KIND, text(text),
                Optional.empty(), Optional.empty())).envelope();
    }

    private static void assertRefused(ErrorCode code, Runnable call) {
        assertEquals(code, assertThrows(ParleyException.class, call::run).code());
    }
}
