package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.core.UuidV7;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The WAL stays bounded while commits never pause and readers never stop, as under a
 * sustained send load with streams following every inbox: passive checkpoints alone never
 * get the log restarted there, and the file grew by every commit.
 */
class WalBoundTest {
    private static final NodeId INBOX = NodeId.of("inbox");
    private static final String TEXT = "w".repeat(8 * 1024);
    private static final int APPENDERS = 8;
    private static final int READERS = 4;
    /** Small, so that the test writes little: the production default is {@link Checkpointer#RESTART_AT_BYTES}. */
    private static final long RESTART_AT = 1L << 20;

    private final UuidV7 ids = new UuidV7(InstantSource.system());

    @Test
    void theWalStaysBoundedUnderSteadyCommitsAndReaders(@TempDir Path dir) throws Exception {
        try (SqliteStore store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, RESTART_AT, SqliteStore.AUDIT_FOLD_EVERY)) {
            load(store, dir.resolve(SqliteStore.FILE_NAME + "-wal"));
        }
    }

    /**
     * A reader outside the hub (a sqlite3 shell, a backup) keeps every restart from working:
     * the writer then must not wait a second after each commit for a restart that cannot come.
     * Held after each commit, these 60 appends would take a minute.
     */
    @Test
    void aReaderOutsideTheHubThatBlocksRestartsDoesNotHoldCommits(@TempDir Path dir) throws Exception {
        try (SqliteStore store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, RESTART_AT, SqliteStore.AUDIT_FOLD_EVERY)) {
            append(store);
            try (Connection outside = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME))) {
                outside.setAutoCommit(false);
                try (Statement s = outside.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM envelopes")) {
                    rs.next(); // a read transaction, open on the WAL until the end of this block
                    Path wal = dir.resolve(SqliteStore.FILE_NAME + "-wal");
                    while (size(wal) <= Checkpointer.HOLD_FACTOR * RESTART_AT) {
                        append(store);
                    }
                    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                        for (int i = 0; i < 60; i++) {
                            append(store);
                        }
                    }, "past the bound, with no restart possible, commits go on");
                }
                outside.rollback();
            }
        }
    }

    private void load(SqliteStore store, Path wal) throws InterruptedException {
        long payload = 24 * RESTART_AT; // what the appenders write in all, as envelope text
        AtomicLong written = new AtomicLong();
        AtomicLong largestWal = new AtomicLong();
        AtomicBoolean appending = new AtomicBoolean(true);
        List<Thread> readers = new ArrayList<>();
        for (int i = 0; i < READERS; i++) {
            readers.add(Thread.ofPlatform().start(() -> {
                while (appending.get()) { // like a stream: the newest envelopes of the inbox, over and over
                    store.inboxAfter(INBOX, Math.max(0, store.headSeq(INBOX) - 4), 4);
                }
            }));
        }
        List<Thread> appenders = new ArrayList<>();
        for (int i = 0; i < APPENDERS; i++) {
            appenders.add(Thread.ofPlatform().start(() -> {
                while (written.addAndGet(TEXT.length()) <= payload) {
                    append(store);
                    largestWal.accumulateAndGet(size(wal), Math::max);
                }
            }));
        }
        for (Thread t : appenders) {
            t.join();
        }
        appending.set(false);
        for (Thread t : readers) {
            t.join();
        }
        long appended = store.headSeq(INBOX);
        assertEquals(payload / TEXT.length(), appended, "every append went through");
        // the bound leaves room for what commits add while the checkpointer reacts; unbounded, the WAL holds it all
        assertTrue(largestWal.get() <= payload / 3, "the WAL reached " + largestWal.get() + " bytes while "
                + payload + " bytes of text were appended; the log restarts at " + RESTART_AT);
    }

    private void append(SqliteStore store) {
        Envelope draft = new Envelope(ids.next(), 0, NodeId.of("sender"), INBOX, "message", Optional.of(TEXT),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(),
                Instant.now(), new Trace(1, Route.INTRA_GROUP, "test"));
        store.append(draft, new AuditEntry(Instant.now(), "sender", "send", "inbox", AuditEntry.Decision.ALLOW, "test",
                Optional.empty(), "test"), Optional.empty(), Optional.empty());
    }

    /** The file's length, 0 while it does not exist (no WAL yet, or none after a clean checkpoint). */
    static long size(Path file) {
        try {
            return Files.size(file);
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
