package dev.parley.store;

import dev.parley.core.Appended;
import dev.parley.core.AuditEntry;
import dev.parley.core.AuditQuery;
import dev.parley.core.AuditRecord;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.DeliveryState;
import dev.parley.core.DeliveryStore;
import dev.parley.core.Envelope;
import dev.parley.core.FederationStore.Inbound;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.NodeKind;
import dev.parley.core.Outgoing;
import dev.parley.core.RemoteStep;
import dev.parley.core.Route;
import dev.parley.core.Task;
import dev.parley.core.TaskCopy;
import dev.parley.core.TaskEvent;
import dev.parley.core.TaskState;
import dev.parley.core.Trace;
import dev.parley.core.UuidV7;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The federation tables on a real SQLite file: relay marks with their change, cursors with what was taken in. */
class SqliteFederationTest {
    private static final Instant NOW = Instant.parse("2026-11-24T10:00:00.000Z");
    private static final NodeId LEAD = NodeId.of("lead");
    private static final NodeId WORKER = NodeId.of("worker");
    private static final NodeId REMOTE = NodeId.of("remote");

    @TempDir
    Path dir;
    private final UuidV7 ids = new UuidV7(InstantSource.system());
    private SqliteStore store;

    private SqliteStore open() {
        store = SqliteStore.open(dir, e -> { }, (count, nanos) -> { });
        return store;
    }

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    void anEnvelopeForAnotherGatewaysNodeIsCommittedWithItsMarkAndOwedAfterARestart() {
        open().createNode(node(LEAD), "hash-lead", audit());
        store.federation().mirrorNode(node(WORKER), "b");
        Envelope sent = draft(LEAD, WORKER);
        Appended appended = store.append(sent, audit(), Optional.empty(), Optional.empty());
        assertEquals(Optional.of(new Appended.Relayed("b", false)), appended.relayed());
        Appended local = store.append(draft(WORKER, LEAD), audit(), Optional.empty(), Optional.empty());
        assertTrue(local.relayed().isEmpty(), "a local target owes nothing");

        store.close(); // a crash between the commit and the publication
        SqliteFederation federation = open().federation();
        List<Outgoing> owed = federation.owed(0, 10);
        assertEquals(1, owed.size());
        Outgoing.Mail mail = assertInstanceOf(Outgoing.Mail.class, owed.getFirst());
        assertEquals("b", mail.gateway());
        assertEquals(sent.id() + "@b", mail.dedupeId(), "the envelope at the gateway it goes to");
        assertEquals("b", store.loadGraph().owners().get(WORKER));

        federation.relayed(mail.pos(), NOW, Duration.ofSeconds(30));
        assertEquals(0, federation.owedCount());

        // The relay reads on after what the stream acknowledged: a position is never handed out twice.
        store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty());
        List<Outgoing> next = federation.owed(mail.pos(), 10);
        assertEquals(1, next.size(), "a new mark after the table emptied comes after the cleared one");
        assertTrue(next.getFirst().pos() > mail.pos());
    }

    @Test
    void anEnvelopeItsOwnerDoesNotConfirmIsPublishedAgainWithBackoffUntilConfirmed() {
        open().createNode(node(LEAD), "hash-lead", audit());
        SqliteFederation federation = store.federation();
        SqliteDeliveries deliveries = store.deliveries(null);
        federation.mirrorNode(node(WORKER), "b");
        Envelope overtaken = store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty()).envelope();
        Envelope silent = store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty()).envelope();
        // the owner's accepted step for the first arrives before the relay commits its publication
        assertTrue(folded("b", 1, new RemoteStep(overtaken.id(), DeliveryState.ACCEPTED, NOW, "accepted")));
        federation.relayed(federation.owed(0, 10).getLast().pos(), NOW, Duration.ofSeconds(30));

        assertTrue(deliveries.due(NOW.plusSeconds(29), Optional.empty(), 10).items().isEmpty(), "not due within the window");
        List<DeliveryStore.Due> due = deliveries.due(NOW.plusSeconds(30), Optional.empty(), 10).items();
        assertEquals(List.of(silent.id()), due.stream().map(d -> d.envelope().id()).toList(),
                "only the unconfirmed envelope is checked");
        assertEquals(DeliveryStore.Purpose.OWNER_ACK, due.getFirst().purpose());
        assertEquals(1, due.getFirst().attempt());

        assertTrue(federation.republish(silent.id(), 2));
        assertFalse(federation.republish(silent.id(), 2), "a check is acted on once");
        assertTrue(deliveries.due(NOW.plusSeconds(3600), Optional.empty(), 10).items().isEmpty(), "not due while the publication is owed");
        Outgoing.Mail again = assertInstanceOf(Outgoing.Mail.class, federation.owed(0, 10).getFirst());
        assertEquals(silent.id() + "@b", again.dedupeId(), "the same Nats-Msg-Id");
        Instant published = NOW.plusSeconds(31);
        federation.relayed(again.pos(), published, Duration.ofSeconds(30));
        assertTrue(deliveries.due(published.plusSeconds(59), Optional.empty(), 10).items().isEmpty(), "the second window is twice as long");
        assertEquals(2, deliveries.due(published.plusSeconds(60), Optional.empty(), 10).items().getFirst().attempt());

        assertTrue(folded("b", 2, new RemoteStep(silent.id(), DeliveryState.ACCEPTED, published, "accepted")));
        assertTrue(deliveries.due(published.plusSeconds(3600), Optional.empty(), 10).items().isEmpty(), "a confirmed envelope is not checked");
        // a scan that read the check before the confirmation acts on nothing
        assertFalse(federation.republish(silent.id(), 3));
        assertFalse(federation.giveUp(silent.id(), 2, "late", published, Optional.empty()));
        assertEquals(DeliveryState.ACCEPTED, store.message(silent.id()).orElseThrow().state());
        assertEquals(0, federation.owedCount(), "no third publication was marked");
    }

    @Test
    void anEnvelopeNeverConfirmedIsDeadLetteredOnceWithItsNotice() {
        open().createNode(node(LEAD), "hash-lead", audit());
        SqliteFederation federation = store.federation();
        federation.mirrorNode(node(WORKER), "b");
        Envelope silent = store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty()).envelope();
        federation.relayed(federation.owed(0, 10).getLast().pos(), NOW, Duration.ofSeconds(1));
        Envelope notice = draft(WORKER, LEAD);
        assertTrue(federation.giveUp(silent.id(), 1, "never confirmed", NOW, Optional.of(notice)));
        assertFalse(federation.giveUp(silent.id(), 1, "never confirmed", NOW, Optional.of(notice)), "once");
        assertEquals(DeliveryState.DEAD_LETTERED, store.message(silent.id()).orElseThrow().state());
        assertEquals(1, store.headSeq(LEAD), "the notice reached the sender");
        assertTrue(store.deliveries(null).due(NOW.plusSeconds(3600), Optional.empty(), 10).items().isEmpty());
    }

    @Test
    void ingestCommitsTheEnvelopeWithTheCursorOnceAndOwesTheSenderItsSteps() {
        open().createNode(node(WORKER), "hash-worker", audit());
        SqliteFederation federation = store.federation();
        federation.mirrorNode(node(LEAD), "a");
        Envelope inbound = draft(LEAD, WORKER);

        assertEquals(List.of(true), federation.take("a", List.of(mail(7, inbound))));
        assertEquals(List.of(false), federation.take("a", List.of(mail(9, inbound))),
                "the same envelope id is taken once");
        assertEquals(Map.of("a", 9L), federation.cursors());
        assertEquals(1, store.headSeq(WORKER));
        Envelope taken = store.message(inbound.id()).orElseThrow().envelope();
        assertEquals(1, taken.seq());

        store.markDeliveredNow(List.of(taken), NOW.plusSeconds(3), Optional.empty());
        store.apply(inbound.id(), new DeliveryEvent.Processed(), NOW, audit());
        List<RemoteStep> owed = federation.owed(0, 10).stream()
                .map(o -> assertInstanceOf(Outgoing.Ack.class, o).step()).toList();
        List<DeliveryState> steps = owed.stream().map(RemoteStep::state).toList();
        assertEquals(new RemoteStep(inbound.id(), DeliveryState.DELIVERED, NOW.plusSeconds(3), "delivered"), owed.get(2),
                "the delivered step at the instant of its mark");
        assertEquals(List.of(DeliveryState.ACCEPTED, DeliveryState.ACCEPTED, DeliveryState.DELIVERED,
                DeliveryState.PROCESSED), steps, "the envelope taken again is accepted again: its sender may have"
                + " published it again because the first accepted has not reached it");

        federation.take("a", List.of(new Inbound.Skip(12, audit())));
        assertEquals(Map.of("a", 12L), federation.cursors());
        federation.take("a", List.of(new Inbound.Skip(10, audit())));
        assertEquals(Map.of("a", 12L), federation.cursors(), "a cursor never moves back");
    }

    /**
     * A stream's page marked delivered owes the delivered step of each envelope whose sender
     * another gateway owns, at the page's instant, and nothing for a local sender's.
     */
    @Test
    void aPageMarkedDeliveredOwesTheStepOfEachEnvelopeFromAnotherGatewaysNode() {
        open().createNode(node(WORKER), "hash-worker", audit());
        store.createNode(node(REMOTE), "hash-remote", audit());
        SqliteFederation federation = store.federation();
        federation.mirrorNode(node(LEAD), "a");
        List<Inbound> inbound = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            inbound.add(mail(i + 1, draft(LEAD, WORKER)));
        }
        federation.take("a", inbound);
        Envelope local = store.append(draft(REMOTE, WORKER), audit(), Optional.empty(), Optional.empty()).envelope();
        List<Envelope> page = store.inboxAfter(WORKER, 0, 100);
        assertEquals(41, page.size());
        assertEquals(local.id(), page.getLast().id());
        long acceptedSteps = federation.owed(0, 200).size();

        store.markDeliveredNow(page, NOW.plusSeconds(3), Optional.empty());
        List<RemoteStep> delivered = federation.owed(0, 200).stream()
                .map(o -> assertInstanceOf(Outgoing.Ack.class, o).step())
                .filter(step -> step.state() == DeliveryState.DELIVERED).toList();
        assertEquals(page.subList(0, 40).stream()
                        .map(e -> new RemoteStep(e.id(), DeliveryState.DELIVERED, NOW.plusSeconds(3), "delivered")).toList(),
                delivered, "one delivered step for each envelope of lead's, in the page's order");
        assertEquals(acceptedSteps + 40, federation.owed(0, 200).size(), "nothing owed for the local sender's");
    }

    @Test
    void aBatchIsCommittedWholeWithTheCursorAtItsLastRecordOrNotAtAll() {
        open().createNode(node(WORKER), "hash-worker", audit());
        SqliteFederation federation = store.federation();
        federation.mirrorNode(node(LEAD), "a");
        Envelope first = draft(LEAD, WORKER);
        Envelope second = draft(LEAD, WORKER);

        // a record the store cannot write (here: one without its audit entry) fails the batch
        Envelope lost = draft(LEAD, WORKER);
        RuntimeException failed = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
                () -> federation.take("a", List.of(mail(3, first),
                        new Inbound.Mail(4, lost, null, Optional.empty()))));
        assertTrue(federation.cursors().isEmpty(), "the cursor stays where it was: " + failed);
        assertEquals(0, store.headSeq(WORKER), "nothing of a failed batch is committed");

        assertEquals(List.of(true, false, true), federation.take("a", List.of(mail(3, first),
                new Inbound.Skip(5, audit()), mail(8, second))));
        assertEquals(Map.of("a", 8L), federation.cursors());
        assertEquals(2, store.headSeq(WORKER));
        assertEquals(2, store.message(second.id()).orElseThrow().envelope().seq(), "in stream order");
    }

    @Test
    void anEnvelopeRefusedHereOwesItsSendersGatewayAFailedStep() {
        open().createNode(node(WORKER), "hash-worker", audit());
        SqliteFederation federation = store.federation();
        federation.mirrorNode(node(LEAD), "a");
        Envelope refused = draft(LEAD, WORKER);
        assertEquals(List.of(false), federation.take("a", List.of(new Inbound.Refused(4, refused, audit()))));
        assertEquals(Map.of("a", 4L), federation.cursors());
        assertEquals(0, store.headSeq(WORKER), "never delivered");
        Outgoing.Ack step = assertInstanceOf(Outgoing.Ack.class, federation.owed(0, 10).getFirst());
        assertEquals("a", step.gateway());
        assertEquals(DeliveryState.FAILED, step.step().state());
        assertEquals(refused.id(), step.step().ref());
        assertTrue(step.step().detail().startsWith("refused: "), step.step().detail());
    }

    @Test
    void stepsFromTheOwnerFoldIntoTheSendersTimeline() {
        open().createNode(node(LEAD), "hash-lead", audit());
        SqliteFederation federation = store.federation();
        federation.mirrorNode(node(WORKER), "b");
        Envelope sent = store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty()).envelope();

        assertTrue(folded("b", 1, new RemoteStep(sent.id(), DeliveryState.ACCEPTED, NOW, "accepted")));
        assertFalse(folded("b", 2, new RemoteStep(sent.id(), DeliveryState.ACCEPTED, NOW, "accepted")),
                "a step published twice is folded once");
        assertTrue(folded("b", 2, new RemoteStep(sent.id(), DeliveryState.DELIVERED, NOW.plusMillis(1),
                "delivered")));
        assertTrue(folded("b", 3, new RemoteStep(sent.id(), DeliveryState.REPLIED, NOW.plusMillis(2),
                "reply r1")));
        assertFalse(folded("b", 4, new RemoteStep(sent.id(), DeliveryState.FAILED, NOW.plusMillis(3),
                "late")), "the state machine still decides");

        var record = store.message(sent.id()).orElseThrow();
        assertEquals(DeliveryState.REPLIED, record.state());
        assertEquals(List.of("accepted:", "accepted:accepted by b", "delivered:", "replied:on b: reply r1"),
                record.timeline().stream().map(t -> t.state().wire() + ":" + t.detail()).toList());
        assertEquals(Map.of("b", 4L), federation.cursors());
        List<Outgoing> owed = federation.owed(0, 10);
        assertEquals(1, owed.size(), "only the envelope itself: folding owes no step back for a local sender");
        assertInstanceOf(Outgoing.Mail.class, owed.getFirst());
    }

    @Test
    void aNodeMovedAwayForwardsWhatThisGatewaysNodesSentAndFailsTheRestBackToTheirGateways() {
        open().createNode(node(LEAD), "hash-lead", audit());
        store.createNode(node(WORKER), "hash-worker", audit());
        SqliteFederation federation = store.federation();
        federation.mirrorNode(node(REMOTE), "c");
        Envelope fromHere = store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty()).envelope();
        Envelope fromC = draft(REMOTE, WORKER);
        assertEquals(List.of(true), federation.take("c", List.of(mail(1, fromC))));
        Envelope delivered = store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty()).envelope();
        store.deliveries(null).pushed(List.of(new DeliveryStore.Pushed(delivered, Optional.empty())), NOW);
        long accepted = federation.owedCount(); // the accepted step owed to c

        federation.moveNode(WORKER, Optional.of("b"), "worker moved to gateway b", audit());

        assertEquals("b", store.loadGraph().owners().get(WORKER));
        assertFalse(store.loadGraph().tokenHashes().containsKey(WORKER), "its token stops working here");
        List<Outgoing> owed = federation.owed(0, 10).subList((int) accepted, (int) federation.owedCount());
        assertEquals(2, owed.size(), owed.toString());
        Outgoing.Mail forwarded = assertInstanceOf(Outgoing.Mail.class, owed.getFirst());
        assertEquals(List.of(fromHere.id(), "b"), List.of(forwarded.envelope().id(), forwarded.gateway()),
                "what a node of this gateway sent goes to the new owner; nothing delivered goes");
        Outgoing.Ack told = assertInstanceOf(Outgoing.Ack.class, owed.getLast());
        assertEquals(List.of(fromC.id(), "c", "dead_lettered", "worker moved to gateway b"), List.of(told.step().ref(),
                told.gateway(), told.step().state().wire(), told.step().detail()), "its sender's gateway is told");
        assertEquals(DeliveryState.DEAD_LETTERED, store.message(fromC.id()).orElseThrow().state());
        assertEquals("worker moved to gateway b", store.deliveries(null).deadLetter(fromC.id()).orElseThrow().reason());
        assertEquals(DeliveryState.ACCEPTED, store.message(fromHere.id()).orElseThrow().state(),
                "the sender's copy waits for the new owner's steps");
    }

    @Test
    void aNodeTakenOverHereOwesAndAwaitsNothingFromItsOldOwner() {
        open().createNode(node(LEAD), "hash-lead", audit());
        SqliteFederation federation = store.federation();
        federation.mirrorNode(node(WORKER), "a");
        store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty());
        federation.relayed(federation.owed(0, 10).getLast().pos(), NOW, Duration.ofSeconds(30));
        store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty()); // owed, not yet published
        assertEquals(1, federation.owedCount());

        federation.moveNode(WORKER, Optional.empty(), "unused", audit());

        assertFalse(store.loadGraph().owners().containsKey(WORKER), "a node of this gateway now");
        assertEquals(0, federation.owedCount(), "nothing goes to the old owner");
        assertTrue(store.deliveries(null).due(NOW.plusSeconds(3600), Optional.empty(), 10).items().isEmpty(), "no owner is waited for");
        assertEquals(2, store.headSeq(WORKER), "both are in its inbox here");
    }

    @Test
    void aNodeMovedBetweenTwoOtherGatewaysHasWhatIsOwedAndUnconfirmedSentToTheNewOwnerNow() {
        open().createNode(node(LEAD), "hash-lead", audit());
        SqliteFederation federation = store.federation();
        federation.mirrorNode(node(WORKER), "a");
        Envelope unconfirmed = store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty()).envelope();
        federation.relayed(federation.owed(0, 10).getLast().pos(), NOW, Duration.ofSeconds(30));
        Envelope owed = store.append(draft(LEAD, WORKER), audit(), Optional.empty(), Optional.empty()).envelope();

        federation.moveNode(WORKER, Optional.of("b"), "unused", audit());

        Outgoing.Mail next = assertInstanceOf(Outgoing.Mail.class, federation.owed(0, 10).getFirst());
        assertEquals(List.of(owed.id(), "b"), List.of(next.envelope().id(), next.gateway()));
        List<DeliveryStore.Due> due = store.deliveries(null).due(NOW, Optional.empty(), 10).items();
        assertEquals(List.of(unconfirmed.id()), due.stream().map(d -> d.envelope().id()).toList(),
                "the check of what the old owner never confirmed is due at once, not after its window");
    }

    @Test
    void aTaskEnvelopeTakenInKeepsTheCopyOfItsTaskWithItAndATappedPushCommitsToo() {
        open().createNode(node(WORKER), "hash-worker", audit());
        store.federation().mirrorNode(node(LEAD), "a");
        List<Task> tapped = new java.util.ArrayList<>();
        store.tapTasks((task, notice) -> {
            tapped.add(task);
            return List.of();
        });
        Task submitted = Task.submitted("t1", LEAD, WORKER, "review", Optional.empty(), false, NOW);
        SqliteFederation federation = store.federation();
        Envelope assignment = taskEnvelope(LEAD, WORKER, "task");
        assertEquals(List.of(true, false), federation.take("a", List.of(
                new Inbound.Mail(1, assignment, audit(), Optional.of(new TaskCopy.Assigned(submitted))),
                new Inbound.Mail(2, assignment, audit(), Optional.of(new TaskCopy.Assigned(submitted))))));
        assertEquals(Optional.of(submitted), store.tasks().task("t1"), "the copy, once");
        // Another assignment of the same id (judged before the first was stored) is refused, not delivered.
        Envelope twin = taskEnvelope(LEAD, WORKER, "task");
        assertEquals(List.of(false), federation.take("a", List.of(new Inbound.Mail(3, twin, audit(),
                Optional.of(new TaskCopy.Assigned(submitted))))));
        assertEquals(Optional.of(DeliveryState.FAILED), federation.owed(0, 10).stream()
                .filter(o -> o instanceof Outgoing.Ack ack && ack.step().ref().equals(twin.id()))
                .map(o -> ((Outgoing.Ack) o).step().state()).findFirst(), "the sender's gateway is told");

        Task canceled = submitted.after(new TaskEvent.Cancel("stop"), NOW.plusSeconds(1));
        Envelope cancel = taskEnvelope(LEAD, WORKER, "task_canceled");
        Envelope cancelAgain = taskEnvelope(LEAD, WORKER, "task_canceled");
        TaskCopy.Moved move = new TaskCopy.Moved(new TaskEvent.Cancel("stop"), NOW.plusSeconds(1));
        federation.take("a", List.of(new Inbound.Mail(4, cancel, audit(), Optional.of(move)),
                new Inbound.Mail(5, cancelAgain, audit(), Optional.of(move))));
        assertEquals(TaskState.CANCELED, store.tasks().task("t1").orElseThrow().state());
        assertEquals(List.of(submitted, canceled), tapped, "the taps saw each change the copy took, no other");
        assertEquals(List.of(assignment.id(), cancel.id(), cancelAgain.id()),
                store.inboxAfter(WORKER, 0, 10).stream().map(Envelope::id).toList(), "every envelope is delivered");
        List<AuditRecord> kept = store.audit(new AuditQuery(Optional.empty(), Optional.of(AuditEntry.Decision.DENY),
                Optional.empty(), Optional.of("task.copy"), Optional.empty(), Optional.empty(), Optional.empty(), 10));
        assertEquals(1, kept.size(), kept::toString);
        assertEquals("lead's cancel not taken: task t1 is canceled here", kept.getFirst().entry().reason());
    }

    private Envelope taskEnvelope(NodeId from, NodeId to, String kind) {
        return new Envelope(ids.next(), 0, from, to, kind, Optional.of("review"), Optional.empty(), Optional.of("t1"),
                Optional.empty(), Optional.empty(), Optional.empty(), Map.of(), NOW, new Trace(1, Route.TASK, "test"));
    }

    private static Node node(NodeId id) {
        return new Node(id, NodeKind.EXTERNAL, Optional.empty(), Map.of(), 0, NOW);
    }

    private Envelope draft(NodeId from, NodeId to) {
        return new Envelope(ids.next(), 0, from, to, "message", Optional.of("hello"), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Map.of(), NOW, new Trace(1, Route.INTRA_GROUP, "test"));
    }

    /** An envelope taken in, about no task. */
    private static Inbound.Mail mail(long streamSeq, Envelope envelope) {
        return new Inbound.Mail(streamSeq, envelope, audit(), Optional.empty());
    }

    private static AuditEntry audit() {
        return new AuditEntry(NOW, "test", "send", "x", AuditEntry.Decision.ALLOW, "test", Optional.empty(), "test");
    }

    private boolean folded(String source, long streamSeq, RemoteStep step) {
        return store.federation().take(source, List.of(new Inbound.Step(streamSeq, step))).getFirst();
    }
}
