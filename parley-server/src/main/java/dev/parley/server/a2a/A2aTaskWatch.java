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
 * before its reader takes the task's snapshot, so no change can fall between the two.
 */
public final class A2aTaskWatch implements Notifier {
    private final Map<String, Set<Watcher>> byTask = new ConcurrentHashMap<>();

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

        /** The next change, or empty when none came within {@code timeoutMillis}. */
        Optional<Task> next(long timeoutMillis) throws InterruptedException {
            JsonText change = changes.poll(timeoutMillis, TimeUnit.MILLISECONDS);
            return change == null ? Optional.empty() : Optional.of(Views.TASK_FORMAT.viewed(change).orElseThrow(
                    () -> new IllegalStateException("a task notice committed here does not show its task")));
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
