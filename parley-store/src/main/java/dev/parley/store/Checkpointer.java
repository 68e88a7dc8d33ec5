package dev.parley.store;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Copies the WAL back into the database on its own connection and thread. The writer has
 * automatic checkpoints switched off: left on, every thousandth page would make one
 * unlucky commit copy and sync megabytes while every sender waits behind it. A passive
 * checkpoint runs beside the writer and readers without blocking either.
 */
final class Checkpointer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Checkpointer.class.getName());
    private static final long PERIOD_MILLIS = 250;

    private final Connection connection;
    private final Thread thread;
    private volatile boolean closed;

    Checkpointer(Path file) throws SQLException {
        this.connection = Connections.open(file, Connections.Role.CHECKPOINTER);
        this.thread = Thread.ofPlatform().name("parley-checkpointer").daemon(true).start(this::run);
    }

    private void run() {
        while (!closed) {
            try {
                TimeUnit.MILLISECONDS.sleep(PERIOD_MILLIS);
                checkpoint("PASSIVE");
            } catch (InterruptedException e) {
                return;
            } catch (SQLException e) {
                LOG.log(Level.WARNING, "WAL checkpoint failed; retrying", e);
            }
        }
    }

    private void checkpoint(String mode) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("PRAGMA wal_checkpoint(" + mode + ")");
        }
    }

    /** Stops the thread and folds the WAL in once more, so a cleanly stopped hub leaves a small WAL. */
    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(5_000);
            checkpoint("TRUNCATE");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (SQLException e) {
            LOG.log(Level.WARNING, "final WAL checkpoint failed; the next start replays the WAL", e);
        }
        try {
            connection.close();
        } catch (SQLException ignored) {
            // closing: nothing to recover
        }
    }
}
