package dev.parley.bench;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The figures of one closed-loop run: acknowledged sends inside the measured window, their
 * end-to-end latency (send start to arrival at the reader) and acknowledgement latency, and
 * whether every acknowledged send reached its reader.
 */
final class LoadResult {
    long accepted;        // acknowledgements that arrived inside the window
    double windowSeconds;
    double warmupSeconds;
    Boolean jitQuiet;     // whether the warm-up saw the JIT go quiet; null when it did not wait for it
    int jitWatched;       // the JVMs whose JIT the warm-up watched (this one, a child hub's)
    long acceptedTotal;   // acknowledgements over the whole run (warm-up and tail included)
    long seen;            // of those, seen by a reader
    long deliveredInWindow; // acknowledged sends whose arrival at the reader fell inside the window
    long lost;
    long duplicates;      // a seq (or key) that reached its reader twice
    long errors;
    final Map<String, Long> errorKinds = new TreeMap<>();
    long[] e2e = new long[0];  // nanos, sorted, sends started inside the window
    long[] ack = new long[0];  // nanos, sorted, sends started inside the window

    /** Filled in by callers that scrape the hub's /metrics (NaN otherwise). */
    double meanBatch = Double.NaN;
    double hubAccepted = Double.NaN;
    double commitsPerSecond = Double.NaN;
    double meanCommitMs = Double.NaN;
    double foldsPerSecond = Double.NaN;
    double meanFoldMs = Double.NaN;
    double cpuPercent = Double.NaN;
    double machinePercent = Double.NaN;
    /** The process's CPU in the window per accepted send, in µs, by the part of it that spent it (empty: unknown). */
    Map<Machine.ThreadPart, Double> cpuMicrosPerSend = Map.of();

    double perSecond() {
        return windowSeconds > 0 ? accepted / windowSeconds : Double.NaN;
    }

    /** The warm-up this run took, as the benches print it: "22.0 s", "60.1 s (JIT not quiet)". */
    String warmupTaken() {
        return String.format(Locale.ROOT, "%.1f s%s", warmupSeconds, Boolean.FALSE.equals(jitQuiet) ? " (JIT not quiet)" : "");
    }

    double p50Ms() {
        return BenchSupport.pct(e2e, 50);
    }

    double p99Ms() {
        return BenchSupport.pct(e2e, 99);
    }

    /** {@code {"perSec", "p50Ms", "p99Ms"}} and a few more figures, for JSON output. */
    Map<String, Object> summary() {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("perSec", BenchSupport.round(perSecond()));
        o.put("p50Ms", BenchSupport.round(p50Ms()));
        o.put("p99Ms", BenchSupport.round(p99Ms()));
        o.put("maxMs", BenchSupport.round(BenchSupport.max(e2e)));
        o.put("ackP50Ms", BenchSupport.round(BenchSupport.pct(ack, 50)));
        o.put("ackP99Ms", BenchSupport.round(BenchSupport.pct(ack, 99)));
        o.put("accepted", accepted);
        o.put("windowSeconds", BenchSupport.round(windowSeconds));
        o.put("warmedUpSeconds", BenchSupport.round(warmupSeconds));
        if (jitQuiet != null) {
            o.put("jitQuiet", jitQuiet);
            o.put("jitWatchedJvms", jitWatched);
        }
        o.put("errors", errors);
        o.put("lost", lost);
        o.put("duplicates", duplicates);
        return o;
    }

    /** One closed-loop load generator: sends until stopped, logging every answer. */
    interface Worker extends Runnable {
        void stop();

        SendLog log();
    }

    /** Called at the edges of the measured window, with the System.nanoTime() of the edge. */
    interface Edge {
        void at(long nanos) throws Exception;
    }

    /**
     * The run every workload makes: starts {@code workers} on threads named {@code name-i},
     * lets them warm up ({@link Warmup}), measures a window of {@code seconds}
     * ({@code atStart} and {@code atEnd}, if given, run at its edges; {@code atStart} also once
     * half-way through a warm-up's least seconds, and must bear running twice), stops them, waits up to
     * {@code drainSeconds} for the readers to see every acknowledged send, and computes the figures.
     */
    static LoadResult measure(Worker[] workers, String name, InboxArrivals[] readers, Warmup warmup, int seconds,
                              int drainSeconds, Edge atStart, Edge atEnd) throws Exception {
        Thread[] threads = new Thread[workers.length];
        for (int i = 0; i < workers.length; i++) {
            threads[i] = Thread.ofPlatform().daemon().name(name + "-" + i).start(workers[i]);
        }
        long started = System.nanoTime();
        int least = warmup.leastSeconds();
        if (atStart != null && least > 0) {
            // A rehearsal of the window's start half-way through the warm-up: its first scrape of
            // /metrics took the hub's request path down a branch it had not compiled, and the JIT
            // recompiled the edge's routing and response code inside the window.
            Thread.sleep(least * 500L);
            atStart.at(System.nanoTime());
        }
        Thread.sleep(Math.max(0, least * 1000L - (System.nanoTime() - started) / 1_000_000));
        Boolean jitQuiet = warmup.untilJitQuiet()
                ? JitQuiet.await(warmup.jitOf(), started + TimeUnit.SECONDS.toNanos(warmup.mostSeconds())) : null;
        long w0 = System.nanoTime();
        if (atStart != null) {
            atStart.at(w0);
        }
        Thread.sleep(Math.max(0, seconds * 1000L - (System.nanoTime() - w0) / 1_000_000));
        long w1 = System.nanoTime();
        if (atEnd != null) {
            atEnd.at(w1);
        }
        for (Worker w : workers) {
            w.stop();
        }
        for (Thread t : threads) {
            t.join(60_000);
        }
        SendLog[] logs = Arrays.stream(workers).map(Worker::log).toArray(SendLog[]::new);
        awaitArrivals(logs, readers, TimeUnit.SECONDS.toNanos(drainSeconds));
        LoadResult r = compute(logs, readers, w0, w1);
        r.warmupSeconds = (w0 - started) / 1e9;
        r.jitQuiet = jitQuiet;
        r.jitWatched = warmup.jitOf().size();
        return r;
    }

    /**
     * Waits until every acknowledged send in {@code logs} has reached its reader
     * ({@code readers[log.inbox[k]]}), or {@code drainNanos} have passed; it looks at least
     * once. It checks each send's own key, never a count of arrivals: a reader may also see
     * envelopes no logged send made (one accepted before the run and replayed by its stream,
     * a send whose answer was lost), and a count would then end the drain while a send is
     * still between its answer and its reader. Returns how many sends are still unseen.
     */
    static long awaitArrivals(SendLog[] logs, InboxArrivals[] readers, long drainNanos) throws InterruptedException {
        long deadline = System.nanoTime() + drainNanos;
        long[] unseen = new long[16]; // (log index << 32) | entry index
        int n = 0;
        for (int l = 0; l < logs.length; l++) {
            for (int k = 0; k < logs[l].n; k++) {
                if (!seen(logs, readers, l, k)) {
                    if (n == unseen.length) {
                        unseen = Arrays.copyOf(unseen, n * 2);
                    }
                    unseen[n++] = ((long) l << 32) | k;
                }
            }
        }
        while (n > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
            int still = 0;
            for (int i = 0; i < n; i++) {
                if (!seen(logs, readers, (int) (unseen[i] >>> 32), (int) unseen[i])) {
                    unseen[still++] = unseen[i];
                }
            }
            n = still;
        }
        return n;
    }

    private static boolean seen(SendLog[] logs, InboxArrivals[] readers, int l, int k) {
        return readers[logs[l].inbox[k]].seenAt(logs[l].key[k]) != Long.MIN_VALUE;
    }

    /**
     * Computes the figures of the window [w0, w1) from the senders' logs and the readers'
     * arrivals ({@code readers[log.inbox[k]]} is where send k should have arrived).
     */
    static LoadResult compute(SendLog[] logs, InboxArrivals[] readers, long w0, long w1) {
        LoadResult r = new LoadResult();
        r.windowSeconds = (w1 - w0) / 1e9;
        long inWindowStarts = 0;
        for (SendLog s : logs) {
            r.acceptedTotal += s.n;
            for (int k = 0; k < s.n; k++) {
                if (s.start[k] >= w0 && s.start[k] < w1) {
                    inWindowStarts++;
                }
            }
        }
        long[] e2e = new long[(int) inWindowStarts];
        long[] ack = new long[(int) inWindowStarts];
        int ne = 0;
        int na = 0;
        for (SendLog s : logs) {
            r.errors += s.errors;
            s.errorKinds.forEach((k, v) -> r.errorKinds.merge(k, v, Long::sum));
            for (int k = 0; k < s.n; k++) {
                long start = s.start[k];
                long answered = s.ack[k];
                if (answered >= w0 && answered < w1) {
                    r.accepted++;
                }
                long seenAt = readers[s.inbox[k]].seenAt(s.key[k]);
                if (seenAt == Long.MIN_VALUE) {
                    r.lost++;
                } else {
                    r.seen++;
                    if (seenAt >= w0 && seenAt < w1) {
                        r.deliveredInWindow++;
                    }
                }
                if (start >= w0 && start < w1) {
                    ack[na++] = answered - start;
                    if (seenAt != Long.MIN_VALUE) {
                        e2e[ne++] = seenAt - start;
                    }
                }
            }
        }
        for (InboxArrivals reader : readers) {
            r.duplicates += reader.duplicates();
        }
        r.e2e = Arrays.copyOf(e2e, ne);
        r.ack = Arrays.copyOf(ack, na);
        Arrays.sort(r.e2e);
        Arrays.sort(r.ack);
        return r;
    }
}
