package dev.parley.store;

import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteOpenMode;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** Opens SQLite connections with the settings every Parley connection needs. */
final class Connections {
    /** Each commit waits until the WAL is on disk: what an accepted envelope's 202 stands on. */
    static final String SYNCED_COMMITS = "PRAGMA synchronous = FULL";
    /**
     * Commits do not wait for the disk; the WAL is synced at checkpoints and by the next synced
     * commit (it is one file, synced whole). For derived work, done again after a loss: a power
     * loss can take back the last of it, never what a synced commit wrote after it.
     */
    static final String UNSYNCED_COMMITS = "PRAGMA synchronous = NORMAL";

    private Connections() {
    }

    /**
     * Cuts the WAL file back to {@code bytes} each time this connection starts the log over
     * (only the writer does, on its first commit after a checkpoint that restarted the log).
     */
    static void limitWal(Connection connection, long bytes) throws SQLException {
        try (Statement s = connection.createStatement()) {
            s.execute("PRAGMA journal_size_limit = " + bytes);
        }
    }

    /** Work on a connection that may fail as SQL does. */
    interface Work<T> {
        T run() throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction of {@code connection}: committed when it returns,
     * rolled back when it throws; the connection's auto-commit is as it was afterwards.
     */
    static <T> T inTransaction(Connection connection, Work<T> work) throws SQLException {
        boolean auto = connection.getAutoCommit();
        connection.setAutoCommit(false);
        try {
            T result = work.run();
            connection.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        } finally {
            connection.setAutoCommit(auto);
        }
    }

    /** Attaches the database in {@code file} to {@code connection} under the schema name {@code schema}. */
    static void attach(Connection connection, Path file, String schema) throws SQLException {
        try (var attach = connection.prepareStatement("ATTACH DATABASE ? AS " + schema)) {
            attach.setString(1, file.toString());
            attach.execute();
        }
    }

    /** What a connection is for. */
    enum Role {
        /** The one connection that writes; it never checkpoints, so commits stay short. */
        WRITER,
        /** A query-only connection of the read pool. */
        READER,
        /** The connection that copies the WAL back into the database, off the writer's path. */
        CHECKPOINTER,
        /**
         * The connection that keeps the store's side indexes, a file of their own ({@link SideIndexes}):
         * derived data, built again after any loss, so its commits are not synced one by one.
         */
        SIDE_INDEXES
    }

    /**
     * WAL lets readers proceed while the writer commits; synchronous=FULL syncs the WAL on
     * every commit, which is what makes an accepted envelope survive a crash.
     *
     * <p>Opened without SQLite's own connection mutex (multi-thread mode): sqlite-jdbc already
     * makes every native call on a connection {@code synchronized} on it, and each of ours is
     * used by one thread at a time (the writer, the checkpointer, a reader holding it from the
     * pool), so the mutex only cost a lock and an unlock per call, two or more for each
     * column of each row read: a replay ran at 220-264k envelopes/s with it, 270-410k without.
     */
    static Connection open(Path file, Role role) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setOpenMode(SQLiteOpenMode.NOMUTEX);
        config.setGetGeneratedKeys(false); // never used; costly per insert
        Connection connection = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath(), config.toProperties());
        try (Statement s = connection.createStatement()) {
            configure(s, role);
        } catch (SQLException e) {
            connection.close(); // a file that is not a database fails here, at its first statement
            throw e;
        }
        return connection;
    }

    private static void configure(Statement s, Role role) throws SQLException {
        s.execute("PRAGMA busy_timeout = 10000");
        s.execute("PRAGMA journal_mode = WAL");
        s.execute(SYNCED_COMMITS);
        s.execute("PRAGMA temp_store = MEMORY");
        s.execute("PRAGMA cache_size = -32768");
        switch (role) {
            case WRITER -> s.execute("PRAGMA wal_autocheckpoint = 0");
            case READER -> s.execute("PRAGMA query_only = 1");
            case CHECKPOINTER -> s.execute("PRAGMA busy_timeout = " + Checkpointer.LOCK_WAIT_MILLIS);
            case SIDE_INDEXES -> {
                s.execute(UNSYNCED_COMMITS);
                s.execute("PRAGMA journal_size_limit = " + (4L << 20));
            }
        }
    }
}
