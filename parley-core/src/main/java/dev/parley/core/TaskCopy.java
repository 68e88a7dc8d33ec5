package dev.parley.core;

import java.time.Instant;
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

    /** A party's move, taken in here at {@code at} (this gateway's clock, not the other's). */
    record Moved(TaskEvent event, Instant at) implements TaskCopy {
        /** The copy after the move, by the same state machine; empty when the copy cannot take it. */
        public Optional<Task> applyTo(Task copy) {
            try {
                return Optional.of(copy.after(event, at));
            } catch (ParleyException invalidTransition) {
                return Optional.empty();
            }
        }
    }
}
