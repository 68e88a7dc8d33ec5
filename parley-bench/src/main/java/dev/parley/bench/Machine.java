package dev.parley.bench;

import dev.parley.store.SqliteStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * What a process holds, read from {@code /proc} (Linux; elsewhere the readers answer
 * "unknown"): resident memory, threads, open files and the file-descriptor limit; and the
 * load averages; how this process's CPU divides among its threads. The process's and the
 * machine's CPU totals are in {@link BenchSupport}.
 */
public final class Machine {
    private Machine() {
    }

    public static int cores() {
        return Runtime.getRuntime().availableProcessors();
    }

    /** CPU counters at one instant: this process's CPU time and the machine's jiffies. */
    public record CpuSample(long nanoTime, long processCpuNanos, long[] machineTicks) {
        public static CpuSample now() {
            return new CpuSample(System.nanoTime(), BenchSupport.processCpuNanos(), BenchSupport.machineCpuTicks());
        }

        /** This process's CPU between two samples, as a share (0..100) of all cores; NaN when unknown. */
        public double processPercentUntil(CpuSample later) {
            if (processCpuNanos < 0 || later.processCpuNanos < 0 || later.nanoTime <= nanoTime) {
                return Double.NaN;
            }
            return 100.0 * (later.processCpuNanos - processCpuNanos) / (double) (later.nanoTime - nanoTime) / cores();
        }

        /** The whole machine's busy share (0..100) between two samples; NaN when unknown. */
        public double machinePercentUntil(CpuSample later) {
            return BenchSupport.machineBusyPercent(machineTicks, later.machineTicks);
        }
    }

    /**
     * The parts of this process that a send's CPU is split into, told apart by thread name:
     * the hub runs in the bench's JVM, so the split says how much of it is the hub's and where.
     */
    public enum ThreadPart {
        WRITER("writer", "writer"), ANNOUNCER("announcer", "announcer"), SIDE_INDEXES("side indexes", "sideIndexes"),
        VIRTUAL_THREADS("virtual threads", "virtualThreads"),
        BENCH("the bench's senders and readers", "bench"), JIT("JIT", "jit"), GC("GC", "gc"),
        REST("rest", "rest");

        final String label;
        final String key; // in --json

        ThreadPart(String label, String key) {
            this.label = label;
            this.key = key;
        }

        /**
         * The part of a thread named {@code name} (its {@code comm}, at most 15 characters). The
         * virtual threads' carriers run the hub's request and stream handlers; the bench sends
         * and reads on platform threads of its own.
         */
        static ThreadPart of(String name) {
            if (name.equals(SqliteStore.WRITER_THREAD)) {
                return WRITER;
            } else if (name.equals(comm(SqliteStore.ANNOUNCER_THREAD))) {
                return ANNOUNCER;
            } else if (name.equals(comm(SqliteStore.SIDE_INDEXES_THREAD))) {
                return SIDE_INDEXES;
            } else if (name.startsWith("ForkJoinPool-")) {
                return VIRTUAL_THREADS;
            } else if (name.startsWith("bench-")) {
                return BENCH;
            } else if (name.contains("CompilerThre")) {
                return JIT;
            } else if (name.startsWith("GC Thread") || name.startsWith("G1 ")) {
                return GC;
            }
            return REST;
        }

        /** What /proc keeps of a thread's name: its first 15 characters. */
        private static String comm(String threadName) {
            return threadName.substring(0, Math.min(15, threadName.length()));
        }
    }

    /** Each thread's CPU so far in clock ticks, with its part, by thread id; empty where /proc cannot say. */
    public record ThreadTicks(Map<Long, Sample> threads) {
        /** One thread's part and its CPU so far. */
        public record Sample(ThreadPart part, long ticks) {
        }

        public static ThreadTicks now() {
            return of("self");
        }

        /** The threads of process {@code pid}. */
        static ThreadTicks of(long pid) {
            return of(Long.toString(pid));
        }

        private static ThreadTicks of(String process) {
            Map<Long, Sample> threads = new HashMap<>();
            try (var tasks = Files.list(Path.of("/proc", process, "task"))) {
                for (Path task : (Iterable<Path>) tasks::iterator) {
                    try {
                        threads.put(Long.parseLong(task.getFileName().toString()), new Sample(
                                ThreadPart.of(Files.readString(task.resolve("comm")).strip()),
                                BenchSupport.statTicks(Files.readString(task.resolve("stat")))));
                    } catch (IOException | RuntimeException gone) {
                        // the thread ended between the listing and the read: it is left out
                    }
                }
            } catch (IOException | RuntimeException e) {
                return new ThreadTicks(Map.of());
            }
            return new ThreadTicks(threads);
        }

        /**
         * The CPU of {@code part}'s threads between this sample and {@code later}, in clock ticks (a
         * thread started since counts from zero; one ended since is left out, not subtracted).
         */
        long ticksUntil(ThreadTicks later, ThreadPart part) {
            long ticks = 0;
            for (var t : later.threads.entrySet()) {
                if (t.getValue().part() == part) {
                    Sample before = threads.get(t.getKey());
                    ticks += t.getValue().ticks() - (before == null ? 0 : before.ticks());
                }
            }
            return ticks;
        }

        /**
         * Each part's share (0..1) of the CPU the threads alive at {@code later} took since this
         * sample (a thread started since counts from zero; one ended since is lost with its last
         * ticks); empty when nothing was counted.
         */
        public Map<ThreadPart, Double> sharesUntil(ThreadTicks later) {
            Map<ThreadPart, Long> used = new EnumMap<>(ThreadPart.class);
            later.threads.forEach((tid, now) -> {
                Sample before = threads.get(tid);
                used.merge(now.part(), now.ticks() - (before == null ? 0 : before.ticks()), Long::sum);
            });
            long total = used.values().stream().mapToLong(Long::longValue).sum();
            Map<ThreadPart, Double> shares = new EnumMap<>(ThreadPart.class);
            if (total > 0) {
                for (ThreadPart part : ThreadPart.values()) {
                    shares.put(part, used.getOrDefault(part, 0L) / (double) total);
                }
            }
            return shares;
        }

        /**
         * Each part's CPU in microseconds for each of {@code count} pieces of work that took the
         * process {@code cpuNanos} between this sample and {@code later}: the threads' ticks say how
         * the process's CPU divides, its total is the precise figure.
         */
        public Map<ThreadPart, Double> microsEachUntil(ThreadTicks later, long cpuNanos, long count) {
            double each = cpuNanos / 1000.0 / count;
            Map<ThreadPart, Double> micros = new EnumMap<>(ThreadPart.class);
            sharesUntil(later).forEach((part, share) -> micros.put(part, share * each));
            return micros;
        }
    }

    /**
     * Microseconds a wake-up round trip between two platform threads takes now: one unparks the
     * other and parks until it is unparked back; the median of {@code batches} batches of
     * {@code roundTrips}. A send crosses the hub's threads several times (request, writer,
     * announcer, stream), so where a wake-up is costly (on a paravirtualized guest, a call to the
     * hypervisor) the same code costs more CPU a send: printed beside a bench's figures, it tells
     * a slow day from a slow change.
     */
    public static double wakeRoundTripMicros(int batches, int roundTrips) {
        List<Double> micros = new ArrayList<>(batches);
        for (int b = 0; b < batches; b++) {
            micros.add(wakeRoundTrips(roundTrips) / 1_000.0 / roundTrips);
        }
        return BenchSupport.median(micros);
    }

    /** Nanoseconds {@code roundTrips} round trips took. */
    private static long wakeRoundTrips(int roundTrips) {
        AtomicInteger turn = new AtomicInteger();
        Thread caller = Thread.currentThread();
        Thread echo = Thread.ofPlatform().name("parley-bench-wake-echo").daemon(true).start(() -> {
            for (int i = 1; i <= roundTrips; i++) {
                while (turn.get() != 2 * i - 1) {
                    LockSupport.park();
                }
                turn.set(2 * i);
                LockSupport.unpark(caller);
            }
        });
        long start = System.nanoTime();
        for (int i = 1; i <= roundTrips; i++) {
            turn.set(2 * i - 1);
            LockSupport.unpark(echo);
            while (turn.get() != 2 * i) {
                LockSupport.park();
            }
        }
        long took = System.nanoTime() - start;
        try {
            echo.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return took;
    }

    /** The 1-, 5- and 15-minute load averages as written in /proc/loadavg, or "unknown". */
    public static String loadAverages() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** A {@code kB} field of /proc/&lt;pid&gt;/status (VmRSS, VmHWM, …) in bytes. */
    public static OptionalLong statusBytes(long pid, String field) {
        OptionalLong kib = statusValue(pid, field);
        return kib.isPresent() ? OptionalLong.of(kib.getAsLong() * 1024) : OptionalLong.empty();
    }

    /** The first number of a field of /proc/&lt;pid&gt;/status ("Threads", or kB for Vm* fields). */
    public static OptionalLong statusValue(long pid, String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith(field + ":")) {
                    String[] f = line.substring(field.length() + 1).trim().split("\\s+");
                    return OptionalLong.of(Long.parseLong(f[0]));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or the process is gone
        }
        return OptionalLong.empty();
    }

    /** Resident set size of a process in bytes (VmRSS). */
    public static OptionalLong rssBytes(long pid) {
        return statusBytes(pid, "VmRSS");
    }

    /**
     * The arguments a process runs with, from /proc/&lt;pid&gt;/cmdline (whole, where
     * {@code ProcessHandle.Info} may leave out a long one's); empty when unreadable.
     */
    public static List<String> commandLine(long pid) {
        try {
            String line = new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8);
            return line.isEmpty() ? List.of() : List.of(line.split("\0"));
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    /** Open file descriptors of a process (entries of /proc/&lt;pid&gt;/fd). */
    public static OptionalLong openFiles(long pid) {
        try (var s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return OptionalLong.of(s.count());
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    /** The soft limit on open files of a process, from /proc/&lt;pid&gt;/limits. */
    public static OptionalLong openFilesLimit(long pid) {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/" + pid + "/limits"));
            for (String line : lines) {
                if (line.startsWith("Max open files")) {
                    String[] f = line.substring("Max open files".length()).trim().split("\\s+");
                    return f[0].equals("unlimited") ? OptionalLong.of(Long.MAX_VALUE) : OptionalLong.of(Long.parseLong(f[0]));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return OptionalLong.empty();
    }

    /** Bytes as "123.4 MiB". */
    public static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024.0));
    }

    /** An optional byte count as MiB, or "n/a". */
    public static String mib(OptionalLong bytes) {
        return bytes.isPresent() ? mib(bytes.getAsLong()) : "n/a";
    }

    /** An optional byte count as a MiB figure for JSON (null when unknown). */
    public static Double mibValue(OptionalLong bytes) {
        return bytes.isPresent() ? BenchSupport.round(bytes.getAsLong() / (1024.0 * 1024.0)) : null;
    }
}
