package dev.parley.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.bench.http.HttpConnection;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/** Small helpers every bench scenario shares: setup calls, figures, formatting, cleanup. */
final class BenchSupport {
    static final ObjectMapper JSON = new ObjectMapper();

    private BenchSupport() {
    }

    static void progress(PrintWriter err, String message) {
        err.println("bench: " + message);
        err.flush();
    }

    /** {@code n} characters of printable ASCII (so {@code n} bytes of UTF-8). */
    static String text(int n) {
        String alphabet = "parley-bench-0123456789-abcdefghijklmnopqrstuvwxyz ";
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            sb.append(alphabet.charAt(i % alphabet.length()));
        }
        return sb.toString();
    }

    /** Sample values from GET /metrics, summed over label sets; missing series read as NaN. */
    static Map<String, Double> metrics(HttpConnection admin, String adminToken) throws IOException {
        HttpConnection.Response res = admin.call("GET", "/metrics", adminToken, null);
        Map<String, Double> values = new TreeMap<>();
        if (res.status() != 200) {
            return values;
        }
        for (String line : res.body().split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int nameEnd = 0;
            while (nameEnd < line.length() && line.charAt(nameEnd) != ' ' && line.charAt(nameEnd) != '{') {
                nameEnd++;
            }
            String name = line.substring(0, nameEnd);
            int valueStart = nameEnd;
            if (nameEnd < line.length() && line.charAt(nameEnd) == '{') {
                valueStart = line.indexOf('}', nameEnd) + 1;
                if (valueStart == 0) {
                    continue;
                }
            }
            String[] rest = line.substring(valueStart).trim().split("\\s+");
            try {
                values.merge(name, Double.parseDouble(rest[0]), Double::sum);
            } catch (NumberFormatException | ArrayIndexOutOfBoundsException ignored) {
                // not a sample line we understand
            }
        }
        return values;
    }

    static double delta(Map<String, Double> before, Map<String, Double> after, String name) {
        Double a = before.get(name);
        Double b = after.get(name);
        return a == null || b == null ? Double.NaN : b - a;
    }

    static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /** CPU time (user + system) of a process so far in clock ticks (1/100 s on Linux), or -1. */
    static long cpuTicks(long pid) {
        try {
            return statTicks(Files.readString(Path.of("/proc/" + pid + "/stat")));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** utime + stime (fields 14 and 15) of a process's or a thread's {@code stat} line, in clock ticks. */
    static long statTicks(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // after the name, which may hold spaces
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    /** {total, idle} jiffies from /proc/stat (Linux), or null. */
    static long[] machineCpuTicks() {
        try {
            String first = Files.readAllLines(Path.of("/proc/stat")).getFirst();
            String[] f = first.trim().split("\\s+");
            if (!f[0].equals("cpu") || f.length < 6) {
                return null;
            }
            long total = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) { // user..steal; guest is already in user
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new long[] {total, idle};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Busy share of the whole machine between two {@link #machineCpuTicks()} samples, in %, or NaN. */
    static double machineBusyPercent(long[] before, long[] after) {
        if (before == null || after == null || after[0] <= before[0]) {
            return Double.NaN;
        }
        return 100.0 * ((after[0] - before[0]) - (after[1] - before[1])) / (after[0] - before[0]);
    }

    /** The 1-minute load average from /proc/loadavg, or NaN. */
    static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** The p-th percentile of sorted nanos, in milliseconds (NaN when empty). */
    static double pct(long[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1e6;
    }

    /** The median of {@code values} (the mean of the middle two for an even count; NaN when empty). */
    static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = values.stream().sorted().toList();
        int mid = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(mid) : (sorted.get(mid - 1) + sorted.get(mid)) / 2;
    }

    static double max(long[] sorted) {
        return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1] / 1e6;
    }

    /** "p50 / p99 / max" of sorted nanos, in milliseconds. */
    static String triple(long[] sorted) {
        return String.format(Locale.ROOT, "%.2f / %.2f / %.2f", pct(sorted, 50), pct(sorted, 99), max(sorted));
    }

    /** Milliseconds with two decimals, or "-" for NaN (a table cell). */
    static String ms(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f", v);
    }

    /** Three decimals, or null for NaN and infinities (JSON has neither). */
    static Double round(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : Math.round(v * 1000.0) / 1000.0;
    }

    static String fmt(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    /**
     * A loopback port free now, for a child (hub, nats-server) to listen on, also again after a
     * kill. Drawn below the kernel's ephemeral range (from 32768 on Linux by default): a port from
     * that range can be taken by any outgoing connection before the child binds it; below it only
     * an explicit bind takes a port. The tests' {@code ServerProcess.freePort} draws by the same rule.
     */
    static int freePort() throws IOException {
        for (int tries = 0; tries < 1000; tries++) {
            int port = ThreadLocalRandom.current().nextInt(10_000, 32_768);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
                return port;
            } catch (BindException taken) {
                // another server's: draw again
            }
        }
        throw new IOException("no loopback port free between 10000 and 32767");
    }

    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // best effort: it is a temporary directory
        }
    }
}
