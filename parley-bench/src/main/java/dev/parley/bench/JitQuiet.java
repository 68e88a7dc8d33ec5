package dev.parley.bench;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Whether the JIT compilers of some processes have gone quiet: fed their compiler threads' CPU
 * (clock ticks, from /proc) at successive instants, it answers quiet once the CPU of the last
 * {@link #SPAN_NANOS} was at most {@link #MOST_SHARE} of one core. A compiler that has caught up
 * with a steady load compiles a method now and then (a few milliseconds a second); one still
 * catching up keeps a core busy for seconds at a time.
 */
final class JitQuiet {
    static final long SPAN_NANOS = TimeUnit.SECONDS.toNanos(3);
    static final double MOST_SHARE = 0.02;
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10); // /proc's clock tick, 1/100 s
    private static final long POLL_MILLIS = 250;

    /** The rule, as the benches print it. */
    static final String RULE = "the JIT compilers under " + Math.round(MOST_SHARE * 100) + " % of a core for "
            + TimeUnit.NANOSECONDS.toSeconds(SPAN_NANOS) + " s";

    private final ArrayDeque<long[]> samples = new ArrayDeque<>(); // {nanos, ticks}, oldest first

    /** Takes the compilers' CPU so far ({@code ticks}) at {@code nanos}; answers whether they are quiet. */
    boolean observe(long nanos, long ticks) {
        samples.addLast(new long[] {nanos, ticks});
        // keep the newest sample at least a span old, and none older than it
        while (samples.size() > 1 && nanos - secondOldest()[0] >= SPAN_NANOS) {
            samples.removeFirst();
        }
        long[] first = samples.getFirst();
        long span = nanos - first[0];
        return span >= SPAN_NANOS && (ticks - first[1]) * TICK_NANOS <= MOST_SHARE * span;
    }

    private long[] secondOldest() {
        var it = samples.iterator();
        it.next();
        return it.next();
    }

    /**
     * Waits until the JIT compilers of {@code pids} are quiet, or until {@code deadlineNanos}
     * ({@link System#nanoTime()}); answers whether they were.
     */
    static boolean await(List<Long> pids, long deadlineNanos) throws InterruptedException {
        JitQuiet quiet = new JitQuiet();
        Machine.ThreadTicks[] last = new Machine.ThreadTicks[pids.size()];
        long ticks = 0; // since the first sample
        while (true) {
            long now = System.nanoTime();
            for (int i = 0; i < last.length; i++) {
                Machine.ThreadTicks threads = Machine.ThreadTicks.of(pids.get(i));
                ticks += last[i] == null ? 0 : last[i].ticksUntil(threads, Machine.ThreadPart.JIT);
                last[i] = threads;
            }
            if (quiet.observe(now, ticks)) {
                return true;
            }
            if (now >= deadlineNanos) {
                return false;
            }
            Thread.sleep(Math.min(POLL_MILLIS, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - now))));
        }
    }
}
