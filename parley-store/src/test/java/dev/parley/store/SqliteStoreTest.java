package dev.parley.store;

import dev.parley.core.Appended;
import dev.parley.core.AuditEntry;
import dev.parley.core.AuditQuery;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.DeliveryPolicy;
import dev.parley.core.DeliveryState;
import dev.parley.core.DeliveryStore;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.Grant;
import dev.parley.core.GraphSnapshot;
import dev.parley.core.JsonText;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.NodeKind;
import dev.parley.core.Notifier;
import dev.parley.core.ParleyException;
import dev.parley.core.RetryPolicy;
import dev.parley.core.Route;
import dev.parley.core.Sealer;
import dev.parley.core.Trace;
import dev.parley.core.TraceContext;
import dev.parley.core.Transition;
import dev.parley.core.UuidV7;
import dev.parley.core.Webhook;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SqliteStoreTest {
    private static final Instant NOW = Instant.parse("2026-11-22T10:00:00.000Z");
    private static final NodeId LEAD = NodeId.of("lead");
    private static final NodeId WORKER = NodeId.of("worker");

    @TempDir
    Path dir;
    private final UuidV7 ids = new UuidV7(InstantSource.system());
    private final List<Envelope> notified = new CopyOnWriteArrayList<>();
    private final AtomicInteger commits = new AtomicInteger();
    private final AtomicLong jobs = new AtomicLong();
    private SqliteStore store;

    private SqliteStore open() {
        store = SqliteStore.open(dir, notified::add, (count, nanos) -> {
            commits.incrementAndGet();
            jobs.addAndGet(count);
        });
        return store;
    }

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    void createsTheSchemaInWalModeAtTheLatestVersion() throws Exception {
        open();
        try (var connection = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
             var statement = connection.createStatement()) {
            try (var rs = statement.executeQuery("PRAGMA journal_mode")) {
                assertEquals("wal", rs.getString(1));
            }
            assertEquals(Migrations.latest(), Migrations.version(connection));
        }
    }

    @Test
    void everyMigrationScriptIsApplied() throws Exception {
        // V16 was once written and never listed: the schedule's scan index stayed the old one.
        try (var files = Files.list(Path.of(Migrations.class.getResource("migrations").toURI()))) {
            assertEquals(files.filter(f -> f.getFileName().toString().endsWith(".sql")).count(), Migrations.latest());
        }
        open();
        try (var connection = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
             var rs = connection.createStatement().executeQuery("SELECT group_concat(name, ',') FROM"
                     + " (SELECT name FROM pragma_index_info('schedule_by_due') ORDER BY seqno)")) {
            assertEquals("due_at,envelope_id,purpose", rs.getString(1));
        }
    }

    @Test
    void refusesADatabaseFromANewerBuild() throws Exception {
        open().close();
        store = null;
        try (var connection = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
             var statement = connection.createStatement()) {
            statement.execute("PRAGMA user_version = 99");
        }
        IllegalStateException e = assertThrows(IllegalStateException.class, this::open);
        assertTrue(e.getMessage().contains("schema version 99"), e.getMessage());
    }

    @Test
    void concurrentAppendsShareCommitsAndGetGapFreeSeqs() throws Exception {
        open();
        int senders = 64;
        int each = 40;
        List<Appended> answers = Collections.synchronizedList(new ArrayList<>());
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int s = 0; s < senders; s++) {
                NodeId to = s % 2 == 0 ? LEAD : WORKER;
                pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        answers.add(store.append(draft(WORKER, to, Optional.empty()), audit(), Optional.empty(), Optional.empty()));
                    }
                    return null;
                });
            }
        }
        assertEquals(senders * each, answers.size());
        for (NodeId inbox : List.of(LEAD, WORKER)) {
            List<Envelope> stored = store.inboxAfter(inbox, 0, 10_000);
            assertEquals(senders * each / 2, stored.size());
            for (int i = 0; i < stored.size(); i++) {
                assertEquals(i + 1, stored.get(i).seq());
            }
            assertEquals(stored.size(), store.headSeq(inbox));
        }
        assertTrue(commits.get() < jobs.get(), "group commit: " + commits.get() + " commits for " + jobs.get() + " jobs");
        assertEquals(senders * each, notified.size());
    }

    @Test
    void theSameMessageIdFromTheSameSenderIsStoredOnce() {
        open();
        Appended first = store.append(draft(LEAD, WORKER, Optional.of("m-1")), audit(), Optional.empty(), Optional.empty());
        Appended again = store.append(draft(LEAD, WORKER, Optional.of("m-1")), audit(), Optional.empty(), Optional.empty());
        Appended otherSender = store.append(draft(WORKER, WORKER, Optional.of("m-1")), audit(), Optional.empty(), Optional.empty());
        assertFalse(first.duplicate());
        assertTrue(again.duplicate());
        assertEquals(first.envelope().id(), again.envelope().id());
        assertFalse(otherSender.duplicate());
        assertEquals(2, store.inboxAfter(WORKER, 0, 10).size());
    }

    @Test
    void aRefusedReplyWritesNothingAndLeavesItsBatchIntact() {
        open();
        Envelope original = store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty()).envelope();
        assertTrue(store.apply(original.id(), new DeliveryEvent.Failed("nope"), NOW, audit()) instanceof Transition.Moved);
        int auditBefore = store.audit(new AuditQuery(Optional.empty(), Optional.empty(), 1000)).size();
        ParleyException e = assertThrows(ParleyException.class,
                () -> store.append(draft(WORKER, LEAD, Optional.empty()), audit(), Optional.of(original.id()), Optional.empty()));
        assertEquals(ErrorCode.INVALID_TRANSITION, e.code());
        assertEquals(0, store.inboxAfter(LEAD, 0, 10).size());
        assertEquals(auditBefore, store.audit(new AuditQuery(Optional.empty(), Optional.empty(), 1000)).size());
        assertEquals(DeliveryState.FAILED, store.message(original.id()).orElseThrow().state());
    }

    @Test
    void deliveryIsRecordedOnceAndLeavesTheUndeliveredSet() {
        open();
        Envelope first = store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty()).envelope();
        Envelope second = store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty()).envelope();
        store.markDelivered(List.of(first), NOW, Optional.empty(), () -> { });
        store.audit(audit()); // a synchronous write after the queued one: both are committed when it returns
        assertEquals(List.of(second.id()), store.undeliveredAfter(WORKER, 0, 10).stream().map(Envelope::id).toList());
        var record = store.message(first.id()).orElseThrow();
        assertEquals(DeliveryState.DELIVERED, record.state());
        assertEquals(List.of(DeliveryState.ACCEPTED, DeliveryState.DELIVERED),
                record.timeline().stream().map(t -> t.state()).toList());
        assertEquals(1, store.backlog());
    }

    /**
     * Due work comes oldest first, ties broken by envelope id, then purpose; pages after an
     * entry go on from it, so a scanner paging through reaches each entry exactly once.
     */
    @Test
    void dueWorkIsPagedInOneOrderReachingEveryEntryOnce() {
        DeliveryStore deliveries = elevenEntriesDueAtNow();
        DeliveryStore.DuePage all = deliveries.due(NOW, Optional.empty(), 100);
        assertEquals(11, all.items().size());
        assertTrue(all.next().isEmpty(), "a page short of its limit reached the end");
        List<String> keys = keys(all.items());
        assertEquals(keys.stream().sorted().toList(), keys, "one due time: by envelope id, then purpose");

        assertEquals(keys, keys(pageThrough(deliveries, 3)));
        assertTrue(deliveries.due(NOW.minusMillis(1), Optional.empty(), 100).items().isEmpty(),
                "nothing is due before NOW");
    }

    /**
     * An entry whose envelope this build cannot read (here a route it does not know) is passed
     * by, and the pages go on past it, also when it is the last of its page.
     */
    @Test
    void anUnreadableEntryIsPassedByAndThePagesGoOnPastIt() throws Exception {
        DeliveryStore deliveries = elevenEntriesDueAtNow();
        List<String> keys = keys(deliveries.due(NOW, Optional.empty(), 100).items());
        String damaged = keys.get(2).split("/")[0]; // its entries end the first page of three
        try (var db = java.sql.DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
             var update = db.prepareStatement("UPDATE envelopes SET route = 'not-a-route' WHERE id = ?")) {
            db.createStatement().execute("PRAGMA busy_timeout = 10000");
            update.setString(1, damaged);
            assertEquals(1, update.executeUpdate());
        }
        List<String> readable = keys.stream().filter(k -> !k.startsWith(damaged + "/")).toList();
        assertTrue(readable.size() < keys.size());
        assertEquals(readable, keys(pageThrough(deliveries, 3)));
        DeliveryStore.DuePage page = deliveries.due(NOW, Optional.empty(), 100);
        assertEquals(readable, keys(page.items()));
        assertEquals(keys.size(), page.read(), "the unreadable entries are counted as read");
        DeliveryStore.DuePushes pushes = deliveries.duePushes(WORKER, NOW, 7);
        assertEquals(6, pushes.items().size(), "the damaged envelope's push is passed by");
        assertTrue(pushes.more(), "seven rows were read, one unreadable: more may be due");
    }

    /** A node's due pushes come oldest first, without its other entries, what is delivered, or what is due later. */
    @Test
    void aNodesDuePushesComeOldestFirstWithoutWhatIsDeliveredOrNotYetDue() {
        DeliveryStore deliveries = elevenEntriesDueAtNow();
        DeliveryStore.DuePushes pushes = deliveries.duePushes(WORKER, NOW, 100);
        assertTrue(pushes.items().stream().allMatch(d -> d.purpose() == DeliveryStore.Purpose.PUSH),
                "not the deadlines");
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L), seqs(pushes));
        assertFalse(pushes.more());
        DeliveryStore.DuePushes first = deliveries.duePushes(WORKER, NOW, 3);
        assertEquals(List.of(1L, 2L, 3L), seqs(first));
        assertTrue(first.more(), "a read that reached its limit says more may be due");
        assertTrue(deliveries.duePushes(WORKER, NOW.minusMillis(1), 100).items().isEmpty(), "nothing due before NOW");
        assertTrue(deliveries.duePushes(LEAD, NOW, 100).items().isEmpty(), "another node's");

        deliveries.pushed(List.of(new DeliveryStore.Pushed(pushes.items().get(1).envelope(), Optional.empty())), NOW);
        assertEquals(List.of(1L, 3L, 4L, 5L, 6L, 7L), seqs(deliveries.duePushes(WORKER, NOW, 100)));
    }

    /**
     * Due reads end at {@link dev.parley.core.EventStore#PAGE_CHARS} as inbox pages do: each
     * entry here holds a 400,000-character envelope, so a page is three entries whatever its
     * limit, and says that more may follow.
     */
    @Test
    void dueReadsOfLargeEnvelopesEndWithTheEntryThatReachesPageChars() {
        DeliveryStore deliveries = dueAtNow(5, "x".repeat(400_000)); // 5 pushes and 3 deadlines
        DeliveryStore.DuePage first = deliveries.due(NOW, Optional.empty(), 256);
        assertEquals(3, first.items().size(), "1,200,000 characters: the third passes 1 Mi");
        assertEquals(3, first.read());
        assertTrue(first.next().isPresent(), "a page ended by its characters is not the end");
        List<DeliveryStore.Due> all = pageThrough(deliveries, 256);
        assertEquals(8, all.size(), "paging reaches every entry");
        assertEquals(8, Set.copyOf(keys(all)).size(), "each once");
        DeliveryStore.DuePushes pushes = deliveries.duePushes(WORKER, NOW, 256);
        assertEquals(List.of(1L, 2L, 3L), seqs(pushes));
        assertTrue(pushes.more(), "a read ended by its characters says more may be due");
        assertEquals(List.of(1L, 2L), seqs(deliveries.duePushes(WORKER, NOW, 2)), "or its limit");
    }

    private static List<Long> seqs(DeliveryStore.DuePushes due) {
        return due.items().stream().map(d -> d.envelope().seq()).toList();
    }

    /** A webhook node (WORKER) with seven envelopes, each a push due at NOW, every other one a reply deadline at NOW too. */
    private DeliveryStore elevenEntriesDueAtNow() {
        return dueAtNow(7, "hello");
    }

    /** A webhook node (WORKER) with {@code count} envelopes of {@code text}, each a push due at NOW, every other one a reply deadline at NOW too. */
    private DeliveryStore dueAtNow(int count, String text) {
        open();
        DeliveryStore deliveries = store.deliveries(new Sealer() { // sealing is not what these tests are about
            @Override
            public String seal(String secret) {
                return secret;
            }

            @Override
            public String open(String sealed) {
                return sealed;
            }
        });
        deliveries.putPolicy(WORKER, new DeliveryPolicy(Optional.of(Webhook.of("http://127.0.0.1:9/hook",
                "a-test-secret-of-some-length")), RetryPolicy.DEFAULT, Optional.empty()), audit());
        for (int i = 0; i < count; i++) {
            store.append(draft(LEAD, WORKER, Optional.empty(), text), audit(), Optional.empty(),
                    i % 2 == 0 ? Optional.of(NOW) : Optional.empty());
        }
        return deliveries;
    }

    /** Every entry due at NOW, read {@code size} at a time as the dispatcher's scanner reads them. */
    private static List<DeliveryStore.Due> pageThrough(DeliveryStore deliveries, int size) {
        List<DeliveryStore.Due> paged = new ArrayList<>();
        Optional<DeliveryStore.DueKey> after = Optional.empty();
        do {
            DeliveryStore.DuePage page = deliveries.due(NOW, after, size);
            paged.addAll(page.items());
            after = page.next();
        } while (after.isPresent());
        return paged;
    }

    private static List<String> keys(List<DeliveryStore.Due> due) {
        return due.stream().map(d -> d.envelope().id() + "/" + d.purpose()).toList();
    }

    @Test
    void unackedAreTheUnsettledEnvelopesDeliveredOrNotInInboxOrder() {
        open();
        List<Envelope> sent = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            sent.add(store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty())
                    .envelope());
        }
        store.append(draft(WORKER, LEAD, Optional.empty()), audit(), Optional.empty(), Optional.empty());
        store.markDeliveredNow(sent.subList(0, 6), NOW, Optional.empty()); // the last stays accepted
        store.apply(sent.get(0).id(), new DeliveryEvent.Processed(), NOW, audit());
        store.apply(sent.get(1).id(), new DeliveryEvent.Failed("no"), NOW, audit());
        store.append(draft(WORKER, LEAD, Optional.empty()), audit(), Optional.of(sent.get(2).id()), Optional.empty());
        store.deliveries(null).deadLetter(sent.get(3).id(), "gave up", 3, NOW, Optional.empty());
        store.apply(sent.get(4).id(), new DeliveryEvent.SlaMissed(1000), NOW, audit());

        assertEquals(List.of(sent.get(4).id(), sent.get(5).id(), sent.get(6).id()),
                store.unackedAfter(WORKER, 0, 10).stream().map(Envelope::id).toList(),
                "an incident, a delivered and an accepted envelope; not processed, failed, replied or dead-lettered");
        assertEquals(List.of(6L, 7L), store.unackedAfter(WORKER, 5, 10).stream().map(Envelope::seq).toList());
        assertEquals(List.of(5L), store.unackedAfter(WORKER, 0, 1).stream().map(Envelope::seq).toList());
        assertEquals(List.of(sent.get(6).id()), store.undeliveredAfter(WORKER, 0, 10).stream().map(Envelope::id)
                .toList());
    }

    @Test
    void unackedAreFoundPastAnyLengthOfSettledHistory() throws Exception {
        open();
        int total = 2_100;
        List<Envelope> sent = new CopyOnWriteArrayList<>();
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) { // concurrent, so commits are grouped
            for (int i = 0; i < total; i++) {
                pool.submit(() -> sent.add(store.append(draft(LEAD, WORKER, Optional.empty()), audit(),
                        Optional.empty(), Optional.empty()).envelope()));
            }
        }
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            sent.stream().filter(e -> e.seq() > 1 && e.seq() <= total - 10).forEach(e -> pool.submit(() ->
                    store.apply(e.id(), new DeliveryEvent.Processed(), NOW, audit())));
        }
        assertEquals(List.of(1L), store.unackedAfter(WORKER, 0, 10).stream().map(Envelope::seq).toList());
        List<Long> tail = new ArrayList<>();
        for (long seq = total - 9; seq <= total; seq++) {
            tail.add(seq);
        }
        assertEquals(tail, store.unackedAfter(WORKER, 1, 10).stream().map(Envelope::seq).toList(),
                "found behind two thousand settled envelopes");
        assertEquals(List.of(), store.unackedAfter(WORKER, total, 10));
    }

    /**
     * A stream's marks wait for the writer without the envelopes' text and data, which a
     * catch-up that outruns the writer would otherwise hold by the thousand; what they record
     * and announce is the same envelopes' delivery.
     */
    @Test
    void marksWaitForTheWriterWithoutTheEnvelopesPayload() throws Exception {
        List<Envelope> announced = new CopyOnWriteArrayList<>();
        store = SqliteStore.open(dir, new Notifier() {
            @Override
            public void committed(Envelope envelope) {
            }

            @Override
            public void delivered(List<Envelope> envelopes, Instant at) {
                announced.addAll(envelopes);
            }
        }, (count, nanos) -> {
        });
        List<Envelope> page = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            page.add(store.append(draft(LEAD, WORKER, Optional.empty(), "text " + i), audit(), Optional.empty(),
                    Optional.empty()).envelope());
        }
        store.markDelivered(page, NOW, Optional.empty(), () -> { });
        store.close(); // the announcer has announced every committed batch once close returns

        assertEquals(page.stream().map(Envelope::withoutPayload).toList(), announced,
                "the same envelopes, seqs and attempts, without their text");
        store = SqliteStore.open(dir, e -> {
        }, (count, nanos) -> {
        });
        for (Envelope envelope : page) {
            assertEquals(DeliveryState.DELIVERED, store.message(envelope.id()).orElseThrow().state());
        }
        assertEquals(List.of("text 0", "text 1", "text 2"), store.inboxAfter(WORKER, 0, 10).stream()
                .map(e -> e.text().orElseThrow()).toList(), "the stored envelopes keep their text");
    }

    /**
     * A long page of one inbox (a stream's page from the store), marked by its seqs:
     * delivered already, it marks nothing; with one undelivered envelope in it, that one
     * alone is marked, and only it gets an ack check.
     */
    @Test
    void aLongPageMarksOnlyWhatWasNotDeliveredYet() throws Exception {
        List<List<String>> announced = new CopyOnWriteArrayList<>();
        store = SqliteStore.open(dir, new Notifier() {
            @Override
            public void committed(Envelope envelope) {
            }

            @Override
            public void delivered(List<Envelope> envelopes, Instant at) {
                announced.add(envelopes.stream().map(Envelope::id).toList());
            }
        }, (count, nanos) -> {
        });
        List<Envelope> page = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            page.add(store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty())
                    .envelope());
        }
        store.markDeliveredNow(page, NOW, Optional.of(Duration.ofMinutes(1)));
        store.markDeliveredNow(page, NOW.plusSeconds(5), Optional.of(Duration.ofMinutes(1)));
        Envelope late = store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty())
                .envelope();
        List<Envelope> mixed = new ArrayList<>(page.subList(1, 40));
        mixed.add(late);
        store.markDeliveredNow(mixed, NOW.plusSeconds(10), Optional.of(Duration.ofMinutes(1)));
        store.close(); // the announcer has announced every committed batch once close returns

        assertEquals(List.of(page.stream().map(Envelope::id).toList(), List.of(late.id())), announced,
                "the page once, nothing for it again, then only the envelope that was not delivered");
        store = SqliteStore.open(dir, e -> {
        }, (count, nanos) -> {
        });
        List<DeliveryStore.Due> due = store.deliveries(null).due(NOW.plus(Duration.ofDays(1)), Optional.empty(), 100)
                .items();
        assertEquals(41, due.size(), "one ack check for each envelope, none for marking one again");
        assertTrue(due.stream().allMatch(d -> d.purpose() == DeliveryStore.Purpose.REDELIVER
                && d.dueAt().equals((d.envelope().id().equals(late.id()) ? NOW.plusSeconds(10) : NOW)
                .plus(Duration.ofMinutes(1)))), () -> "due entries: " + due);
    }

    /**
     * Every stream's marks since the last job, written by one statement: each envelope at the
     * instant of the first mark that lists it, each mark told what it marked, ack checks for the
     * marks that ask for them.
     */
    @Test
    void manyMarksAreWrittenTogetherEachEnvelopeAtItsFirstMark() throws Exception {
        open();
        Envelope e1 = store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty()).envelope();
        Envelope e2 = store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty()).envelope();
        Envelope e3 = store.append(draft(WORKER, LEAD, Optional.empty()), audit(), Optional.empty(), Optional.empty()).envelope();
        store.close();
        try (var db = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME))) {
            db.setAutoCommit(false);
            Statements statements = new Statements(db);
            Duration check = Duration.ofMinutes(1);
            List<List<Envelope>> marked = Ledger.markDelivered(statements, List.of(
                    new Ledger.Mark(List.of(e1, e3), NOW, Optional.empty()),
                    new Ledger.Mark(List.of(e3, e2), NOW.plusSeconds(5), Optional.of(check)),
                    new Ledger.Mark(List.of(), NOW.plusSeconds(7), Optional.of(check)),
                    new Ledger.Mark(List.of(e1), NOW.plusSeconds(9), Optional.of(check))));
            assertEquals(List.of(List.of(e1, e3), List.of(e2), List.of(), List.of()), marked);
            assertEquals(List.of(List.of()), Ledger.markDelivered(statements,
                    List.of(new Ledger.Mark(List.of(e2, e3), NOW.plusSeconds(11), Optional.of(check)))),
                    "marked already: nothing, and no ack check");
            db.commit();
            statements.close();
        }
        open();
        Map<String, Instant> deliveredAt = new java.util.HashMap<>();
        for (Envelope e : List.of(e1, e2, e3)) {
            var record = store.message(e.id()).orElseThrow();
            assertEquals(DeliveryState.DELIVERED, record.state());
            deliveredAt.put(e.id(), record.timeline().stream().filter(t -> t.state() == DeliveryState.DELIVERED)
                    .findFirst().orElseThrow().at());
        }
        assertEquals(Map.of(e1.id(), NOW, e2.id(), NOW.plusSeconds(5), e3.id(), NOW), deliveredAt);
        List<DeliveryStore.Due> due = store.deliveries(null).due(NOW.plus(Duration.ofDays(1)), Optional.empty(), 100)
                .items();
        assertEquals(1, due.size(), () -> "one ack check, for the envelope its mark asked it for: " + due);
        assertEquals(e2.id(), due.getFirst().envelope().id());
        assertEquals(NOW.plusSeconds(5).plus(Duration.ofMinutes(1)), due.getFirst().dueAt());
        assertEquals(0, store.backlog());
    }

    /**
     * A stream's page (consecutive seqs of one inbox) is marked by its seqs, a long list with a
     * hole by its ids: the envelope in the hole, which the list does not name, stays undelivered
     * although its seq lies between the list's first and last.
     */
    @Test
    void aPageIsMarkedByItsSeqsAndAListWithAHoleOnlyByWhatItNames() throws Exception {
        open();
        List<Envelope> inbox = new ArrayList<>();
        for (int i = 0; i < 80; i++) {
            inbox.add(store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty())
                    .envelope());
        }
        store.close();
        List<Envelope> page = inbox.subList(0, 40);
        Envelope hole = inbox.get(60);
        List<Envelope> holed = new ArrayList<>(inbox.subList(40, 80));
        holed.remove(hole);
        try (var db = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME))) {
            db.setAutoCommit(false);
            Statements statements = new Statements(db);
            assertEquals(List.of(page, holed), Ledger.markDelivered(statements, List.of(
                    new Ledger.Mark(page, NOW, Optional.empty()),
                    new Ledger.Mark(holed, NOW.plusSeconds(5), Optional.empty()))), "each mark in its list's order");
            assertEquals(List.of(List.of(), List.of()), Ledger.markDelivered(statements, List.of(
                    new Ledger.Mark(page, NOW.plusSeconds(9), Optional.empty()),
                    new Ledger.Mark(holed, NOW.plusSeconds(9), Optional.empty()))), "marked already: nothing");
            db.commit();
            statements.close();
        }
        open();
        for (Envelope envelope : inbox) {
            assertEquals(envelope == hole ? DeliveryState.ACCEPTED : DeliveryState.DELIVERED,
                    store.message(envelope.id()).orElseThrow().state(), () -> "seq " + envelope.seq());
        }
    }

    @Test
    void markDeliveredNowIsCommittedWhenItReturns() {
        open();
        Envelope envelope = store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(),
                Optional.empty()).envelope();
        store.markDeliveredNow(List.of(envelope), NOW, Optional.empty());
        assertEquals(DeliveryState.DELIVERED, store.message(envelope.id()).orElseThrow().state());
    }

    @Test
    void reopeningRestoresGraphAndContinuesSeqs() {
        open();
        Node lead = new Node(LEAD, NodeKind.HUMAN, Optional.empty(), Map.of("role", "lead"), 0, NOW);
        Node worker = new Node(WORKER, NodeKind.MANAGED, Optional.of(LEAD), Map.of(), 1, NOW);
        Node gone = new Node(NodeId.of("gone"), NodeKind.EXTERNAL, Optional.of(LEAD), Map.of(), 1, NOW);
        store.createNode(lead, "hash-lead", audit());
        store.createNode(worker, "hash-worker", audit());
        store.createNode(gone, "hash-gone", audit());
        store.deleteNode(gone.id(), NOW, audit());
        Grant grant = new Grant(ids.next(), WORKER, new dev.parley.core.GrantTarget.Node(LEAD), Optional.of(NOW.plusSeconds(3600)), "note", NOW);
        store.createGrant(grant, audit());
        store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty());
        store.close();

        open();
        GraphSnapshot snapshot = store.loadGraph();
        assertEquals(List.of(lead, worker), snapshot.nodes().stream().sorted((a, b) -> a.id().compareTo(b.id())).toList());
        assertEquals(java.util.Set.of(gone.id()), snapshot.retired());
        assertEquals(Map.of(LEAD, "hash-lead", WORKER, "hash-worker"), snapshot.tokenHashes());
        assertEquals(List.of(grant), snapshot.grants());
        assertEquals(2, store.append(draft(LEAD, WORKER, Optional.empty()), audit(), Optional.empty(), Optional.empty()).envelope().seq());
        ParleyException exists = assertThrows(ParleyException.class, () -> store.createNode(gone, "h", audit()));
        assertEquals(ErrorCode.NODE_EXISTS, exists.code());
    }

    /**
     * A page ends at its limit or with the envelope that brings its text and data to
     * {@link dev.parley.core.EventStore#PAGE_CHARS}, whichever comes first, and always holds one envelope
     * however large: each of the three reads by seq.
     */
    @Test
    void aPageOfLargeEnvelopesEndsWithTheOneThatReachesPageChars() {
        open();
        int[] sizes = {400_000, 400_000, 300_000, 10, 2_000_000, 5, 6};
        for (int size : sizes) {
            store.append(draft(LEAD, WORKER, Optional.empty(), "x".repeat(size)), audit(), Optional.empty(), Optional.empty());
        }
        List<java.util.function.BiFunction<Long, Integer, List<Envelope>>> reads = List.of(
                (after, limit) -> store.inboxAfter(WORKER, after, limit),
                (after, limit) -> store.undeliveredAfter(WORKER, after, limit),
                (after, limit) -> store.unackedAfter(WORKER, after, limit));
        for (var read : reads) {
            assertEquals(List.of(1L, 2L, 3L), read.apply(0L, 256).stream().map(Envelope::seq).toList(),
                    "1,100,000 characters: the third passes 1 Mi");
            assertEquals(List.of(4L, 5L), read.apply(3L, 256).stream().map(Envelope::seq).toList(),
                    "the page ends with the envelope that passes the bound");
            assertEquals(List.of(5L), read.apply(4L, 256).stream().map(Envelope::seq).toList(),
                    "a page holds one envelope however large");
            assertEquals(List.of(6L, 7L), read.apply(5L, 256).stream().map(Envelope::seq).toList());
            assertEquals(List.of(1L, 2L), read.apply(0L, 2).stream().map(Envelope::seq).toList(), "or its limit");
        }
    }

    /**
     * Each of the 256 ways of setting text, data, corrId, threadId, messageId, meta, topic and rule
     * comes back as it was stored, from a page and from a read by id alike.
     */
    @Test
    void anEnvelopeComesBackAsStoredWhicheverOfItsOptionalFieldsAreSet() {
        open();
        List<Envelope> stored = new ArrayList<>();
        for (int set = 0; set < 256; set++) {
            int s = set;
            Envelope draft = new Envelope(ids.next(), 0, LEAD, WORKER, "message",
                    field(s, 0, "text \"quoted\" ünï ✓"), field(s, 1, "{\"n\":" + set + "}").map(JsonText::new),
                    field(s, 2, "corr-" + set), field(s, 3, "thread-" + set), field(s, 6, "topic." + set),
                    field(s, 4, "key-" + set), (s & 1 << 5) == 0 ? Map.of() : Map.of("k", "v" + set, "x", ""), NOW,
                    new Trace(1, Route.INTRA_GROUP, "v" + set, field(s, 7, "rule-" + set), TraceContext.fresh()));
            stored.add(store.append(draft, audit(), Optional.empty(), Optional.empty()).envelope());
        }
        List<Envelope> read = new ArrayList<>();
        for (long after = 0; read.size() < stored.size(); after = read.getLast().seq()) {
            List<Envelope> page = store.inboxAfter(WORKER, after, 100);
            assertFalse(page.isEmpty(), "the inbox ended after " + read.size() + " envelopes");
            read.addAll(page);
        }
        assertEquals(stored, read);
        for (int set : new int[] {0, 1, 0b1010_1010, 0b0101_0101, 255}) {
            Envelope one = stored.get(set);
            assertEquals(one, store.message(one.id()).orElseThrow().envelope(), "set " + set);
        }
    }

    /** {@code value} when bit {@code bit} of {@code set} is on. */
    private static Optional<String> field(int set, int bit, String value) {
        return (set & 1 << bit) == 0 ? Optional.empty() : Optional.of(value);
    }

    private Envelope draft(NodeId from, NodeId to, Optional<String> messageId) {
        return draft(from, to, messageId, "hello");
    }

    private Envelope draft(NodeId from, NodeId to, Optional<String> messageId, String text) {
        return new Envelope(ids.next(), 0, from, to, "message", Optional.of(text), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), messageId, Map.of(), NOW, new Trace(1, Route.INTRA_GROUP, "test"));
    }

    private static AuditEntry audit() {
        return new AuditEntry(NOW, "test", "send", "x", AuditEntry.Decision.ALLOW, "test", Optional.empty(), "test");
    }
}
