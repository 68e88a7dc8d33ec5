package dev.parley.server.metrics;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/** A Prometheus histogram of durations in seconds, with fixed bucket bounds. */
final class Histogram {
    private static final double[] BOUNDS = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5};

    private final String name;
    private final String help;
    private final AtomicLongArray buckets = new AtomicLongArray(BOUNDS.length);
    private final LongAdder count = new LongAdder();
    private final LongAdder nanos = new LongAdder();

    Histogram(String name, String help) {
        this.name = name;
        this.help = help;
    }

    void observe(long durationNanos) {
        count.increment();
        nanos.add(durationNanos);
        double seconds = durationNanos / 1e9;
        for (int i = 0; i < BOUNDS.length; i++) {
            if (seconds <= BOUNDS[i]) {
                buckets.incrementAndGet(i);
                return;
            }
        }
    }

    long count() {
        return count.sum();
    }

    void render(StringBuilder out) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" histogram\n");
        long cumulative = 0;
        for (int i = 0; i < BOUNDS.length; i++) {
            cumulative += buckets.get(i);
            out.append(name).append("_bucket{le=\"").append(BOUNDS[i]).append("\"} ").append(cumulative).append('\n');
        }
        out.append(name).append("_bucket{le=\"+Inf\"} ").append(count.sum()).append('\n');
        out.append(name).append("_sum ").append(nanos.sum() / 1e9).append('\n');
        out.append(name).append("_count ").append(count.sum()).append('\n');
    }
}
