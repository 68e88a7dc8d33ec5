package dev.parley.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log is counted as SQLite reads it: commits whose frames carry the log's salts and
 * checksums, sends as the rows they add to the table, frames named by their b-tree. A store is
 * made here with known commits (its connection open, so its log stays as written).
 */
class WalFramesTest {
    private static final int COMMITS = 10;
    private static final int ROWS_EACH = 3;

    @Test
    void countsTheCommitsTheRowsTheyAddAndTheirPagesByTree(@TempDir Path data) throws Exception {
        try (Connection store = store(data)) {
            WalFrames.Count count = WalFrames.of(data, "envelopes");
            assertEquals(COMMITS + 1, count.commits(), count.toString()); // the index's and the inserts'; the table's starts the count
            assertEquals(COMMITS * ROWS_EACH, count.sends(), count.toString());
            assertTrue(count.framesByTree().get("envelopes") >= COMMITS, count.toString());
            assertTrue(count.framesByTree().get("envelopes_text") >= COMMITS, count.toString());
            assertEquals(count.frames(), framesAfterTheFirstCommit(data), count.toString());
        }
    }

    /**
     * A log that starts over after the table had rows, its first commit not the table's: counting
     * starts at the first commit that wrote one of the table's leaves (the rows it added set the
     * start), not from nothing, which would count every row the table ever had.
     */
    @Test
    void countingStartsAtTheFirstCommitThatWroteTheTable(@TempDir Path data) throws Exception {
        try (Connection store = store(data); Statement s = store.createStatement()) {
            s.execute("PRAGMA wal_checkpoint(TRUNCATE)"); // the next commit starts the log over
            s.execute("CREATE TABLE notes (note TEXT)");
            store.setAutoCommit(false);
            for (int c = 0; c < 4; c++) {
                for (int r = 0; r < ROWS_EACH; r++) {
                    s.execute("INSERT INTO envelopes (text) VALUES ('again " + c + "-" + r + "')");
                }
                store.commit();
            }
            store.setAutoCommit(true);
            WalFrames.Count count = WalFrames.of(data, "envelopes");
            assertEquals(3, count.commits(), count.toString());
            assertEquals(3 * ROWS_EACH, count.sends(), count.toString());
        }
    }

    /** A copy of the store and its log (no wal-index: SQLite reads the log as it recovers), its last page damaged. */
    @Test
    void aFrameReadHalfWrittenEndsTheCount(@TempDir Path data, @TempDir Path copy) throws Exception {
        try (Connection store = store(data)) {
            for (String file : new String[] {"parley.db", "parley.db-wal"}) {
                Files.copy(data.resolve(file), copy.resolve(file));
            }
        }
        try (RandomAccessFile file = new RandomAccessFile(copy.resolve("parley.db-wal").toFile(), "rw")) {
            long lastPage = file.length() - 4096 / 2; // inside the last frame's page: the last commit's
            file.seek(lastPage);
            int b = file.read();
            file.seek(lastPage);
            file.write(b ^ 0xFF);
        }
        WalFrames.Count count = WalFrames.of(copy, "envelopes");
        assertEquals(COMMITS, count.commits(), count.toString());
        assertEquals((COMMITS - 1) * ROWS_EACH, count.sends(), count.toString());
    }

    @Test
    void aFileThatIsNoLogIsSaidToBe(@TempDir Path data) throws Exception {
        try (Connection store = store(data)) {
            Files.write(data.resolve("parley.db-wal"), new byte[4096]);
            IOException refused = assertThrows(IOException.class, () -> WalFrames.of(data, "envelopes"));
            assertTrue(refused.getMessage().contains("not a SQLite write-ahead log"), refused.getMessage());
        }
    }

    /** A store in WAL mode never checkpointed: a table, an index, then {@link #COMMITS} commits of rows. */
    private static Connection store(Path data) throws Exception {
        Connection connection = DriverManager.getConnection("jdbc:sqlite:" + data.resolve("parley.db"));
        try (Statement s = connection.createStatement()) {
            s.execute("PRAGMA journal_mode = WAL");
            s.execute("PRAGMA wal_autocheckpoint = 0");
            s.execute("CREATE TABLE envelopes (pos INTEGER PRIMARY KEY, text TEXT NOT NULL)");
            s.execute("CREATE INDEX envelopes_text ON envelopes (text)");
            connection.setAutoCommit(false);
            String text = "x".repeat(1000);
            for (int c = 0; c < COMMITS; c++) {
                for (int r = 0; r < ROWS_EACH; r++) {
                    s.execute("INSERT INTO envelopes (text) VALUES ('" + text + c + "-" + r + "')");
                }
                connection.commit();
            }
            connection.setAutoCommit(true);
        }
        return connection;
    }

    /** Frames in the log after its first commit's, read from the frame headers alone. */
    private static long framesAfterTheFirstCommit(Path data) throws IOException {
        byte[] wal = Files.readAllBytes(data.resolve("parley.db-wal"));
        long frames = (wal.length - 32) / (4096 + 24);
        for (int at = 32, i = 1; ; at += 4096 + 24, i++) {
            if (java.nio.ByteBuffer.wrap(wal, at + 4, 4).getInt() != 0) { // the first commit's last frame
                return frames - i;
            }
        }
    }
}
