package dev.parley.server;

import dev.parley.store.CommitObserver;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/** The hub's counters and gauges, rendered in the Prometheus text format. */
final class Metrics implements CommitObserver {
    /** Upper bounds of the commit latency histogram, in seconds. */
    private static final double[] LATENCY_BUCKETS = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1};

    final LongAdder sendsAccepted = new LongAdder();
    final LongAdder sendsDuplicate = new LongAdder();
    final LongAdder sendsDenied = new LongAdder();
    final LongAdder slowReadersDisconnected = new LongAdder();
    final AtomicInteger openStreams = new AtomicInteger();

    private final LongAdder commits = new LongAdder();
    private final LongAdder committedJobs = new LongAdder();
    private final LongAdder commitNanos = new LongAdder();
    private final AtomicLongArray latencyBuckets = new AtomicLongArray(LATENCY_BUCKETS.length);
    private volatile LongSupplier backlog = () -> 0;

    void backlogFrom(LongSupplier source) {
        this.backlog = source;
    }

    @Override
    public void committed(int jobs, long nanos) {
        commits.increment();
        committedJobs.add(jobs);
        commitNanos.add(nanos);
        double seconds = nanos / 1e9;
        for (int i = 0; i < LATENCY_BUCKETS.length; i++) {
            if (seconds <= LATENCY_BUCKETS[i]) {
                latencyBuckets.incrementAndGet(i);
                break;
            }
        }
    }

    String render() {
        StringBuilder out = new StringBuilder(2048);
        counter(out, "parley_sends_accepted_total", "Envelopes accepted (committed) from sends and replies.",
                sendsAccepted.sum());
        counter(out, "parley_sends_duplicate_total", "Sends answered from an earlier messageId without a new envelope.",
                sendsDuplicate.sum());
        counter(out, "parley_sends_denied_total", "Sends refused by the ACL or for an unknown target.",
                sendsDenied.sum());
        counter(out, "parley_slow_readers_disconnected_total", "Streams cut because a write stayed blocked too long.",
                slowReadersDisconnected.sum());
        out.append("# HELP parley_commit_batch_size Jobs per group commit.\n# TYPE parley_commit_batch_size summary\n");
        out.append("parley_commit_batch_size_sum ").append(committedJobs.sum()).append('\n');
        out.append("parley_commit_batch_size_count ").append(commits.sum()).append('\n');
        out.append("# HELP parley_commit_latency_seconds Time to run and sync one group commit.\n");
        out.append("# TYPE parley_commit_latency_seconds histogram\n");
        long cumulative = 0;
        for (int i = 0; i < LATENCY_BUCKETS.length; i++) {
            cumulative += latencyBuckets.get(i);
            out.append("parley_commit_latency_seconds_bucket{le=\"").append(LATENCY_BUCKETS[i]).append("\"} ")
                    .append(cumulative).append('\n');
        }
        out.append("parley_commit_latency_seconds_bucket{le=\"+Inf\"} ").append(commits.sum()).append('\n');
        out.append("parley_commit_latency_seconds_sum ").append(commitNanos.sum() / 1e9).append('\n');
        out.append("parley_commit_latency_seconds_count ").append(commits.sum()).append('\n');
        gauge(out, "parley_open_streams", "SSE inbox streams open now.", openStreams.get());
        gauge(out, "parley_inbox_backlog", "Envelopes committed but never delivered, over all inboxes.",
                backlog.getAsLong());
        return out.toString();
    }

    private static void counter(StringBuilder out, String name, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" counter\n");
        out.append(name).append(' ').append(value).append('\n');
    }

    private static void gauge(StringBuilder out, String name, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" gauge\n");
        out.append(name).append(' ').append(value).append('\n');
    }
}
