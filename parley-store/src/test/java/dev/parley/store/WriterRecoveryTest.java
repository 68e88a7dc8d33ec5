package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Route;
import dev.parley.core.StoreHealth;
import dev.parley.core.Trace;
import dev.parley.core.UuidV7;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A group commit that fails part-way leaves the writer clean. The failure is injected in
 * the real database file: a trigger that, while a switch row says so, aborts the statement
 * with {@code RAISE(ROLLBACK)}, which rolls the whole transaction back under the writer, as
 * SQLite does on {@code SQLITE_FULL} or an I/O error. This runs everywhere; the full-disk
 * case on a real filesystem is {@code StorageFullTest} in parley-server.
 */
class WriterRecoveryTest {
    private static final NodeId WORKER = NodeId.of("worker");
    private static final Path TASKS = Path.of("/proc/self/task");
    private static final Instant NOW = Instant.parse("2026-11-22T10:00:00.000Z");

    @TempDir
    Path dir;
    private SqliteStore store;
    private final UuidV7 ids = new UuidV7(InstantSource.system());

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    void appendsResumeAfterAFailedCommitWithSeqsThatContinueWithoutAGap() throws Exception {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE);
        Envelope first = append();
        Envelope second = append();
        injectFault("BEFORE INSERT ON envelopes");

        fault(true);
        assertThrows(ParleyException.class, this::append, "the failed commit is refused");
        assertThrows(ParleyException.class, this::append, "and so is the next while the fault lasts");
        assertEquals(StoreHealth.FAILING, store.health());
        fault(false);

        Envelope third = append();
        assertEquals(StoreHealth.OK, store.health());
        assertEquals(3, third.seq(), "the refused appends took no seq");
        assertEquals(List.of(first.id(), second.id(), third.id()),
                store.inboxAfter(WORKER, 0, 100).stream().map(Envelope::id).toList(),
                "exactly the accepted envelopes are stored, nothing of the refused ones");
    }

    @Test
    void aFailingStoreIsProbedWithoutAWriteToWakeTheWriter() throws Exception {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE);
        append();
        injectFault("BEFORE INSERT ON envelopes");
        fault(true);
        assertThrows(ParleyException.class, this::append);
        assertEquals(StoreHealth.FAILING, store.health());
        // The writer probes on its own (a write of one page, which the fault does not touch).
        await().atMost(Duration.ofSeconds(10)).until(() -> store.health() == StoreHealth.OK);
    }

    @Test
    void aHealthyWriterWaitsForWorkWithoutWaking() throws Exception {
        assumeTrue(Files.isDirectory(TASKS), "needs Linux's /proc/self/task to count a thread's wake-ups");
        Set<Path> others = writerTasks();
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE);
        Set<Path> writers = writerTasks();
        writers.removeAll(others);
        assertEquals(1, writers.size(), "the store's writer thread is found by its name");
        Path writer = writers.iterator().next();
        append();
        long start = wakeUps(writer);
        // It polled its queue every 50 ms: about 20 wake-ups a second, idle. Two are the append's:
        // the writer may still be finishing it (a wait for the checkpointer's monitor, then its park).
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> wakeUps(writer) - start <= 2);
        assertEquals(2, append().seq(), "and a write still wakes it");
    }

    @Test
    void theAuditFoldDoesNotReportTheStoreHealthyAfterAFailedCommit() throws Exception {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, Duration.ZERO);
        append();
        injectFault("BEFORE INSERT ON envelopes");
        fault(true);
        assertThrows(ParleyException.class, this::append);
        store.close(); // the writer stops after what followed the failed batch: a fold, had it run, would be done
        assertEquals(StoreHealth.FAILING, store.health(), "no fold commits while commits fail");
        store = null;
    }

    @Test
    void aFoldThatFailsCostsNoWriteItsCommitAndSaysNothingOfTheStoresHealth() throws Exception {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, Duration.ZERO);
        injectFault("BEFORE UPDATE OF folded ON audit");
        fault(true);
        Envelope first = append(); // each append is followed by a fold, which the fault rolls back
        Envelope second = append();
        store.close();
        assertEquals(StoreHealth.OK, store.health(), "the writes worked; only the folds failed");
        assertEquals(2, unfolded());
        fault(false);
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, Duration.ZERO);
        append();
        store.close();
        store = null;
        assertEquals(0, unfolded(), "the next fold took them in");
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE);
        assertEquals(List.of(first.id(), second.id()), store.inboxAfter(WORKER, 0, 2).stream().map(Envelope::id).toList());
    }

    @Test
    void aFoldThatKeepsFailingIsLoggedOnceAndAgainWhenItWorks() throws Exception {
        Logger log = Logger.getLogger(Writer.class.getName());
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getMessage().startsWith(SqliteStore.FOLD)) {
                    records.add(record);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Level before = log.getLevel();
        log.setLevel(Level.FINE);
        log.addHandler(capture);
        try {
            store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, Duration.ZERO);
            injectFault("BEFORE UPDATE OF folded ON audit");
            fault(true);
            for (int i = 0; i < 3; i++) {
                append(); // each append is followed by a fold, which the fault rolls back
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> records.size() >= 3);
            assertEquals(Level.WARNING, records.getFirst().getLevel(), "the first failure is seen");
            assertTrue(records.getFirst().getMessage().contains("injected I/O failure"), records.getFirst().getMessage());
            assertEquals(List.of(Level.FINE, Level.FINE), records.subList(1, 3).stream().map(LogRecord::getLevel).toList(),
                    "the failures after it, every interval, are not");
            fault(false);
            append();
            await().atMost(Duration.ofSeconds(10)).until(() -> records.getLast().getLevel() == Level.INFO);
            assertEquals(SqliteStore.FOLD + " works again", records.getLast().getMessage());
            assertEquals(1, records.stream().filter(r -> r.getLevel() == Level.WARNING).count());
        } finally {
            log.removeHandler(capture);
            log.setLevel(before);
        }
    }

    @Test
    void everySendIsCommittedSyncedAndTheFoldsAreNot() throws Exception {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, Duration.ZERO);
        recordSync();
        for (int i = 0; i < 3; i++) {
            append(); // each append is followed by a fold
        }
        store.close();
        store = null;
        assertEquals(List.of(SYNCED, SYNCED, SYNCED), syncSeen("send"), "every send's commit waits for the disk");
        List<Integer> folds = syncSeen("fold");
        assertTrue(folds.size() >= 3, "a fold after each send: " + folds);
        assertEquals(List.of(UNSYNCED), folds.stream().distinct().toList(), "the folds' commits do not wait for it");
    }

    /** A fold that fails on its statement (its job undone) or with its transaction (the connection replaced). */
    @ParameterizedTest
    @ValueSource(strings = {"ABORT", "ROLLBACK"})
    void theSendsAfterAFoldThatFailedAreCommittedSynced(String raise) throws Exception {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, Duration.ZERO);
        recordSync();
        injectFault("BEFORE UPDATE OF folded ON audit", raise);
        fault(true);
        append();
        append();
        fault(false);
        append();
        store.close();
        store = null;
        assertEquals(List.of(SYNCED, SYNCED, SYNCED), syncSeen("send"), "every send's commit waits for the disk");
    }

    private static final int SYNCED = 2;
    private static final int UNSYNCED = 1;

    /**
     * Records, from inside the writer's transactions, whether its commits wait for the disk
     * ({@code PRAGMA synchronous}: 2 they do, 1 they do not): with each envelope written and
     * with each move of the fold's mark.
     */
    private void recordSync() throws SQLException {
        try (Connection c = side(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE sync_seen (what TEXT NOT NULL, level INTEGER NOT NULL)");
            s.execute("CREATE TRIGGER sync_of_sends AFTER INSERT ON envelopes"
                    + " BEGIN INSERT INTO sync_seen SELECT 'send', synchronous FROM pragma_synchronous; END");
            s.execute("CREATE TRIGGER sync_of_folds AFTER UPDATE ON envelopes_folded"
                    + " BEGIN INSERT INTO sync_seen SELECT 'fold', synchronous FROM pragma_synchronous; END");
        }
    }

    /** The levels recorded for {@code what}, in order. */
    private List<Integer> syncSeen(String what) throws SQLException {
        List<Integer> levels = new java.util.ArrayList<>();
        try (Connection c = side(); var select = c.prepareStatement("SELECT level FROM sync_seen WHERE what = ? ORDER BY rowid")) {
            select.setString(1, what);
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    levels.add(rs.getInt(1));
                }
            }
        }
        return levels;
    }

    private long unfolded() throws SQLException {
        try (Connection c = side(); Statement s = c.createStatement();
             var rs = s.executeQuery("SELECT count(*) FROM audit WHERE folded = 0")) {
            return rs.getLong(1);
        }
    }

    @Test
    void deliveryMarksLostWithAFailedCommitAreWrittenOnceWritesWork() throws Exception {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE);
        Envelope envelope = append();
        injectFault("BEFORE UPDATE OF delivered_at ON envelopes");

        fault(true);
        store.markDelivered(List.of(envelope), NOW, Optional.empty(), () -> { });
        try {
            store.audit(audit()); // queued after the mark: once it is answered, the mark's commit was tried
        } catch (ParleyException sharedTheLostTransaction) {
            // it was in the mark's batch, and the fault rolled the whole batch back
        }
        assertEquals(List.of(envelope.id()), store.undeliveredAfter(WORKER, 0, 10).stream().map(Envelope::id).toList(),
                "the fault refused the mark");
        fault(false);

        await().atMost(Duration.ofSeconds(10)).until(() -> store.undeliveredAfter(WORKER, 0, 10).isEmpty());
    }

    /**
     * A poll's marks that cannot be committed wait with the streams' (the poll is answered, reads
     * go on) while the inbox has room for them; past {@link DeliveryMarks#UNCOMMITTED_PER_INBOX}
     * the poll is refused with the commit's failure, and once writes work they are all committed.
     */
    @Test
    void aPollsMarksWaitWhileTheStoreCannotBeWrittenUpToTheInboxsBound() throws Exception {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE);
        List<Envelope> page = new ArrayList<>();
        for (int i = 0; i < 256; i++) {
            page.add(append());
        }
        injectFault("BEFORE UPDATE OF delivered_at ON envelopes");

        fault(true);
        for (int marked = 0; marked < DeliveryMarks.UNCOMMITTED_PER_INBOX; marked += page.size()) {
            store.markDeliveredNow(page, NOW, Optional.empty()); // its commit fails: the marks wait
        }
        ParleyException refused = assertThrows(ParleyException.class,
                () -> store.markDeliveredNow(page, NOW, Optional.empty()));
        assertEquals(ErrorCode.INTERNAL, refused.code());
        assertEquals(page.size(), store.undeliveredAfter(WORKER, 0, 1000).size(), "nothing was committed");
        fault(false);

        await().atMost(Duration.ofSeconds(10)).until(() -> store.undeliveredAfter(WORKER, 0, 1000).isEmpty());
        store.markDeliveredNow(page, NOW, Optional.empty()); // room again, and writes work
    }

    private Envelope append() {
        Envelope draft = new Envelope(ids.next(), 0, NodeId.of("lead"), WORKER, "message", Optional.of("hello"), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(), NOW,
                new Trace(1, Route.INTRA_GROUP, "test"));
        return store.append(draft, audit(), Optional.empty(), Optional.empty()).envelope();
    }

    private static AuditEntry audit() {
        return new AuditEntry(NOW, "test", "send", "x", AuditEntry.Decision.ALLOW, "test", Optional.empty(), "test");
    }

    /** A trigger on {@code event} that rolls the writer's transaction back while the fault is on. */
    private void injectFault(String event) throws SQLException {
        injectFault(event, "ROLLBACK");
    }

    /** A trigger on {@code event} that fails with {@code RAISE(raise)} while the fault is on. */
    private void injectFault(String event, String raise) throws SQLException {
        try (Connection c = side(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE injected_fault (active INTEGER NOT NULL)");
            s.execute("INSERT INTO injected_fault VALUES (0)");
            s.execute("CREATE TRIGGER injected_fault " + event + " WHEN (SELECT active FROM injected_fault)"
                    + " BEGIN SELECT RAISE(" + raise + ", 'injected I/O failure'); END");
        }
    }

    private void fault(boolean active) throws SQLException {
        try (Connection c = side(); Statement s = c.createStatement()) {
            s.execute("UPDATE injected_fault SET active = " + (active ? 1 : 0));
        }
    }

    private Connection side() throws SQLException {
        Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
        try (Statement s = c.createStatement()) {
            s.execute("PRAGMA busy_timeout = 10000");
        }
        return c;
    }

    /** The tasks of this JVM that bear the store's writer's name ({@code comm}: its first 15 characters). */
    private static Set<Path> writerTasks() throws IOException {
        try (Stream<Path> tasks = Files.list(TASKS)) {
            return tasks.filter(t -> read(t.resolve("comm")).strip().equals(SqliteStore.WRITER_THREAD))
                    .collect(Collectors.toCollection(HashSet::new));
        }
    }

    /** The times a task gave up its core to wait: its wake-ups. */
    private static long wakeUps(Path task) {
        return read(task.resolve("status")).lines().filter(l -> l.startsWith("voluntary_ctxt_switches:"))
                .mapToLong(l -> Long.parseLong(l.substring(l.indexOf(':') + 1).strip())).findFirst().orElseThrow();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
