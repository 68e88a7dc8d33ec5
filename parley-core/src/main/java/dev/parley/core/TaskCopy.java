package dev.parley.core;

import java.util.Optional;

/**
 * What an inbound task envelope does to this gateway's copy of its task. A task whose
 * parties live on two gateways has a copy on each; a party moves the copy on its own
 * gateway, and the envelope that tells the other party carries the move to the other copy,
 * committed with that envelope.
 */
public sealed interface TaskCopy {
    /** The task, as its creator's gateway submitted it: the assignee's gateway keeps a copy. */
    record Assigned(Task task) implements TaskCopy {
    }

    /** A party's move ({@code event}), and the task as it stood on that party's gateway after it. */
    record Moved(TaskEvent event, Task after) implements TaskCopy {
        /**
         * The copy here after the move, by the same state machine; empty when the copy cannot
         * take it. Only the creator cancels and only the assignee does the rest, so the one
         * race is a cancel crossing the assignee's moves. Both copies end alike: the
         * assignee's completion or failure replaces a cancel it crossed (the work was done or
         * given up), and anything else that crossed a cancel is not taken on either side.
         */
        public Optional<Task> applyTo(Task copy) {
            if (copy.state() == TaskState.CANCELED && (event instanceof TaskEvent.Complete
                    || event instanceof TaskEvent.Fail)) {
                return Optional.of(new Task(copy.id(), copy.creator(), copy.assignee(), copy.title(), copy.input(),
                        event instanceof TaskEvent.Complete ? TaskState.COMPLETED : TaskState.FAILED,
                        copy.ephemeral(), after.etaSeconds(), after.progress(), after.result(), after.artifacts(),
                        after.reason(), copy.createdAt(), after.updatedAt()));
            }
            try {
                return Optional.of(copy.after(event, after.updatedAt()));
            } catch (ParleyException invalidTransition) {
                return Optional.empty();
            }
        }
    }
}
