package dev.parley.server.delivery;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The streams of one kind being served: how many (a gauge), and for a stopping hub, when those it
 * has just ended have written their last chunk, before the listener closes their connections (a
 * stream's end is written before it counts itself out).
 */
public final class StreamCount {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition none = lock.newCondition();
    private int open;

    public void opened() {
        lock.lock();
        try {
            open++;
        } finally {
            lock.unlock();
        }
    }

    public void closed() {
        lock.lock();
        try {
            if (--open == 0) {
                none.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    int open() {
        lock.lock();
        try {
            return open;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until no stream is open, at most {@code timeout}; false if some still are. */
    public boolean awaitNone(Duration timeout) throws InterruptedException {
        long left = timeout.toNanos();
        lock.lock();
        try {
            while (open > 0 && left > 0) {
                left = none.awaitNanos(left);
            }
            return open == 0;
        } finally {
            lock.unlock();
        }
    }
}
