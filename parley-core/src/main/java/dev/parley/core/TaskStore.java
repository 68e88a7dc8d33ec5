package dev.parley.core;

import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Delegated tasks. Every write stores the task row, appends the envelope that tells the
 * other party, and writes the audit entry, in one transaction.
 */
public interface TaskStore {

    /**
     * A task as it is to be stored, the envelope that announces it, and the decision behind it;
     * for a new task addressed to a capability, that capability's id.
     */
    record TaskChange(Task task, Envelope notice, AuditEntry audit, Optional<String> capability) {
        public TaskChange(Task task, Envelope notice, AuditEntry audit) {
            this(task, notice, audit, Optional.empty());
        }
    }

    /**
     * Stores a new task with its notice. When the notice carries a messageId its sender
     * already used, nothing is written and the task that first messageId created is
     * returned instead. Returns the task as stored.
     */
    Task create(TaskChange created);

    /**
     * Reads the stored task, asks {@code change} what it becomes, and writes that, all in one
     * transaction, so concurrent changes see each other. When {@code change} throws (an
     * illegal transition), nothing is written. Returns the task as stored.
     */
    Task change(String taskId, Function<Task, TaskChange> change);

    Optional<Task> task(String id);

    /** The trace context of the envelope that handed task {@code id} over, which its moves continue. */
    Optional<TraceContext> conversation(String id);

    List<Task> tasks(TaskQuery query);
}
