package dev.parley.core;

import java.util.List;

/**
 * Envelopes that follow a task change into the store: called inside the transaction that
 * writes the change, so what it returns is committed with the change or not at all (for
 * example the pushes owed to the task's webhooks). Runs on the store's writer thread: it
 * must only compute, never block or call the store.
 */
@FunctionalInterface
public interface TaskTap {
    /** The envelopes to append with {@code task} as it now stands; {@code notice} is the change's own notice. */
    List<Envelope> after(Task task, Envelope notice);
}
