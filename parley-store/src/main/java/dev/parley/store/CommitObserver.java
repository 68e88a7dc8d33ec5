package dev.parley.store;

/** Told about every group commit, for metrics. Called on the writer thread; must not block. */
public interface CommitObserver {
    void committed(int jobs, long nanos);

    CommitObserver NONE = (jobs, nanos) -> { };
}
