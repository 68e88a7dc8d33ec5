package dev.parley.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * What a process holds, read from {@code /proc} (Linux; elsewhere the readers answer
 * "unknown"): resident memory, threads, open files and the file-descriptor limit; and the
 * load averages. CPU figures are in {@link BenchSupport}.
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
