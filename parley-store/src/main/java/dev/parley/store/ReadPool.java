package dev.parley.store;

import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A fixed set of query-only connections. In WAL mode they read the last committed state
 * without waiting for the writer; callers borrow one for the length of a query.
 */
final class ReadPool implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ReadPool.class.getName());

    /** A read against one connection. */
    interface Read<T> {
        T run(Statements statements) throws SQLException;
    }

    private final BlockingQueue<Statements> idle;
    private final List<Statements> all = new ArrayList<>();
    /** Reads hold it shared; {@link #pause()} holds it alone. Fair, so that a pause gets its turn among steady reads. */
    private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock(true);

    /** {@code size} connections to the store in {@code file}, each with its side indexes attached. */
    ReadPool(Path file, int size) throws SQLException {
        idle = new ArrayBlockingQueue<>(size);
        for (int i = 0; i < size; i++) {
            Connection connection = Connections.open(file, Connections.Role.READER);
            try {
                SideIndexes.attach(connection, file);
            } catch (SQLException e) {
                connection.close();
                all.forEach(Statements::close);
                throw e;
            }
            Statements statements = new Statements(connection);
            all.add(statements);
            idle.add(statements);
        }
    }

    <T> T read(Read<T> read) {
        Statements statements;
        try {
            gate.readLock().lockInterruptibly();
            try {
                statements = idle.take();
            } catch (InterruptedException e) {
                gate.readLock().unlock();
                throw e;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ParleyException(ErrorCode.UNAVAILABLE, "interrupted while waiting for a read connection");
        }
        try {
            return read.run(statements);
        } catch (SQLException e) {
            statements.discard();
            LOG.log(Level.SEVERE, "read failed", e);
            throw new ParleyException(ErrorCode.INTERNAL, "the store could not be read");
        } finally {
            idle.add(statements);
            gate.readLock().unlock();
        }
    }

    /**
     * Runs {@code work}, which reads the store on a connection outside the pool, as a read of the
     * pool runs: a {@link #pause()} waits for it, so it holds no snapshot of the WAL then either.
     */
    <T> T gated(Connections.Work<T> work) throws SQLException {
        try {
            gate.readLock().lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ParleyException(ErrorCode.UNAVAILABLE, "interrupted while waiting to read the store");
        }
        try {
            return work.run();
        } finally {
            gate.readLock().unlock();
        }
    }

    /**
     * Waits for the reads in flight to end and holds new ones back until the pause is
     * closed: then no reader holds a snapshot of the WAL. A read never waits for the writer.
     */
    Pause pause() throws InterruptedException {
        gate.writeLock().lockInterruptibly();
        return gate.writeLock()::unlock;
    }

    @Override
    public void close() {
        all.forEach(Statements::close);
    }
}
