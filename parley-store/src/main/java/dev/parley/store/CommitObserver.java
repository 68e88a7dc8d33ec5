package dev.parley.store;

/** Told about every group commit, for metrics and telemetry; must not block. */
public interface CommitObserver {
    /** A group commit of {@code jobs} ended, having taken {@code nanos}. Called on the writer thread. */
    void committed(int jobs, long nanos);

    /**
     * The store's announcer is about to announce a batch whose commit took {@code nanos} and
     * ended at {@code endedAt} ({@link System#nanoTime()}): what it announces next belongs to
     * that commit. Called on the announcer thread, one batch after another.
     */
    default void announcing(long nanos, long endedAt) {
    }

    /**
     * The writer's upkeep (the store's fold) ran for {@code nanos}, committed or not; jobs queued
     * meanwhile waited for it. Called on the writer thread.
     */
    default void upkept(long nanos) {
    }

    CommitObserver NONE = (jobs, nanos) -> { };
}
