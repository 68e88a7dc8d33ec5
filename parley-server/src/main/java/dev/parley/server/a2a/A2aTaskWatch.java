package dev.parley.server.a2a;

import dev.parley.core.Envelope;
import dev.parley.core.JsonText;
import dev.parley.core.Notifier;
import dev.parley.core.Route;
import dev.parley.core.Task;
import dev.parley.server.wire.Views;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Follows task changes for A2A streams and blocking sends. Every change of a task commits an
 * envelope to the other party ({@code task_accept}, {@code task_update}, {@code task_complete},
 * {@code task_failed}, {@code task_canceled}) whose data is the task as it then stood; this
 * notifier hands those, in commit order, to the watchers of that task. A watcher is opened
 * before its reader takes the task's snapshot, so no change can fall between the two. A stopping
 * hub ends every watch ({@link #close}): what waits on one hears it at once.
 */
public final class A2aTaskWatch implements Notifier, AutoCloseable {
    /** Put in each watcher's queue when the watches end: a poll waiting then returns at once. */
    private static final JsonText ENDED = new JsonText("null");

    private final Map<String, Set<Watcher>> byTask = new ConcurrentHashMap<>();
    private volatile boolean closed;

    @Override
    public void committed(Envelope envelope) {
        if (envelope.trace().route() != Route.TASK || !envelope.kind().startsWith("task_")
                || envelope.corrId().isEmpty() || envelope.data().isEmpty()) {
            return;
        }
        Set<Watcher> watchers = byTask.get(envelope.corrId().get());
        if (watchers != null) {
            watchers.forEach(w -> w.changes.offer(envelope.data().get()));
        }
    }

    /** Ends every watch, and every watch started from now on ({@link Watcher#ended}): the hub stops. */
    @Override
    public void close() {
        closed = true; // a watcher added after the loop below sees it before it waits
        byTask.values().forEach(watchers -> watchers.forEach(w -> w.changes.offer(ENDED)));
    }

    /** Starts collecting the changes of {@code taskId}; close the watcher when done. */
    Watcher watch(String taskId) {
        Watcher watcher = new Watcher(taskId);
        byTask.computeIfAbsent(taskId, id -> ConcurrentHashMap.newKeySet()).add(watcher);
        return watcher;
    }

    /** The changes of one task, in order. */
    final class Watcher implements AutoCloseable {
        private final String taskId;
        private final LinkedBlockingQueue<JsonText> changes = new LinkedBlockingQueue<>();

        private Watcher(String taskId) {
            this.taskId = taskId;
        }

        /**
         * The next change, or empty when none came within {@code timeoutMillis} or the watch
         * {@link #ended} (then at once).
         */
        Optional<Task> next(long timeoutMillis) throws InterruptedException {
            if (closed) {
                return Optional.empty();
            }
            JsonText change = changes.poll(timeoutMillis, TimeUnit.MILLISECONDS);
            if (change == null || change == ENDED) {
                return Optional.empty();
            }
            return Optional.of(Views.TASK_FORMAT.viewed(change).orElseThrow(
                    () -> new IllegalStateException("a task notice committed here does not show its task")));
        }

        /** The hub is stopping: no change will come any more. */
        boolean ended() {
            return closed;
        }

        @Override
        public void close() {
            byTask.computeIfPresent(taskId, (id, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
