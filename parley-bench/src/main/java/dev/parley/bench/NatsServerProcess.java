package dev.parley.bench;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A {@code nats-server -js} that a bench starts itself: on a free loopback port, with a
 * temporary store directory, stopped by its PID (SIGTERM, then SIGKILL) at {@link #close()},
 * which also removes the directory.
 *
 * <p>With {@code syncAlways} it runs from a configuration file that sets
 * {@code jetstream { sync_interval: always }} (fsync before every acknowledgement, like
 * Parley); that setting exists only from nats-server 2.10 on, and an older server is
 * refused with a message saying so (its configuration check names the unknown field).
 */
final class NatsServerProcess implements AutoCloseable {
    private static final List<String> FALLBACKS = List.of("/usr/sbin/nats-server", "/usr/local/bin/nats-server",
            "/usr/bin/nats-server");

    private final Path binary;
    private final Path dir;
    private final Path log;
    private final int port;
    private final String version;
    private final Process process;

    private NatsServerProcess(Path binary, Path dir, Path log, int port, String version, Process process) {
        this.binary = binary;
        this.dir = dir;
        this.log = log;
        this.port = port;
        this.version = version;
        this.process = process;
    }

    /** Names a nats-server binary to use instead of searching (e.g. a 2.10+ build for sync_interval: always). */
    static final String ENV = "PARLEY_NATS_SERVER";

    /**
     * The nats-server binary: {@code $PARLEY_NATS_SERVER} when set (nothing when it is not an
     * executable file), else the first on PATH, else one of the usual install locations.
     */
    static Optional<Path> find() {
        String chosen = System.getenv(ENV);
        if (chosen != null && !chosen.isBlank()) {
            Path p = Path.of(chosen);
            return Files.isExecutable(p) && !Files.isDirectory(p) ? Optional.of(p) : Optional.empty();
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(File.pathSeparator)) {
                if (d.isEmpty()) {
                    continue;
                }
                Path candidate = Path.of(d, "nats-server");
                if (Files.isExecutable(candidate)) {
                    return Optional.of(candidate);
                }
            }
        }
        return FALLBACKS.stream().map(Path::of).filter(Files::isExecutable).findFirst();
    }

    /** Why a bench that needs nats-server cannot run, for a clear failure. */
    static String missingMessage() {
        String chosen = System.getenv(ENV);
        if (chosen != null && !chosen.isBlank()) {
            return "nats-server not found: " + ENV + "=" + chosen + " is not an executable file";
        }
        return "nats-server not found on PATH nor at " + String.join(", ", FALLBACKS)
                + "; install it (Debian/Ubuntu: apt-get install nats-server) or set " + ENV
                + " to run the JetStream side";
    }

    /** {@code nats-server --version}, e.g. "v2.9.10", or "unknown". */
    static String version(Path binary) {
        try {
            Process p = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            p.waitFor(10, TimeUnit.SECONDS);
            int v = out.lastIndexOf(' ');
            return v >= 0 ? out.substring(v + 1) : out;
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /**
     * Whether this nats-server accepts {@code jetstream { sync_interval: always }}: empty when
     * it does, else why not (checked with {@code nats-server -t}, nothing is started).
     */
    static Optional<String> syncAlwaysProblem(Path binary) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("parley-bench-nats-check-");
        try {
            Path conf = dir.resolve("check.conf");
            Files.writeString(conf, "jetstream {\n  store_dir: \"" + dir.resolve("store") + "\"\n  sync_interval: always\n}\n");
            return configProblem(binary, conf).map(p -> syncAlwaysRefused(version(binary), p));
        } finally {
            BenchSupport.deleteTree(dir);
        }
    }

    private static String syncAlwaysRefused(String version, String output) {
        return "nats-server " + version + " does not accept `jetstream { sync_interval: always }`"
                + (output.contains("unknown field") ? " (the setting exists from nats-server 2.10 on)" : "")
                + ": " + output;
    }

    /** Runs {@code nats-server -t -c conf}: empty when the configuration is valid, else its output. */
    private static Optional<String> configProblem(Path binary, Path conf) throws IOException, InterruptedException {
        Process check = new ProcessBuilder(binary.toString(), "-t", "-c", conf.toString()).redirectErrorStream(true).start();
        String out = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!check.waitFor(10, TimeUnit.SECONDS)) {
            check.destroyForcibly();
            return Optional.of("nats-server -t did not finish within 10 s");
        }
        return check.exitValue() == 0 ? Optional.empty() : Optional.of(out);
    }

    /** Starts the server and waits until it accepts connections (at most 15 s). */
    static NatsServerProcess start(boolean syncAlways, PrintWriter err) throws IOException, InterruptedException {
        Path binary = find().orElseThrow(() -> new IllegalStateException(missingMessage()));
        String version = version(binary);
        Path dir = Files.createTempDirectory("parley-bench-nats-");
        try {
            Path store = Files.createDirectories(dir.resolve("store"));
            Path log = dir.resolve("nats-server.log");
            int port = BenchSupport.freePort();
            List<String> cmd = new ArrayList<>(List.of(binary.toString()));
            if (syncAlways) {
                Path conf = dir.resolve("nats-server.conf");
                Files.writeString(conf, "listen: \"127.0.0.1:" + port + "\"\n"
                        + "jetstream {\n  store_dir: \"" + store + "\"\n  sync_interval: always\n}\n");
                Optional<String> problem = configProblem(binary, conf);
                if (problem.isPresent()) {
                    throw new IllegalStateException(syncAlwaysRefused(version, problem.get()));
                }
                cmd.addAll(List.of("-c", conf.toString()));
            } else {
                cmd.addAll(List.of("-js", "-a", "127.0.0.1", "-p", Integer.toString(port), "-sd", store.toString()));
            }
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.redirectErrorStream(true);
            pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            Process p = pb.start();
            NatsServerProcess server = new NatsServerProcess(binary, dir, log, port, version, p);
            BenchSupport.progress(err, "started " + binary + " " + version + " (pid " + p.pid() + ") on 127.0.0.1:" + port
                    + ", store " + store + (syncAlways ? ", sync_interval: always" : ", default sync_interval"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (!server.accepting()) {
                if (!p.isAlive()) {
                    server.close();
                    throw new IllegalStateException("nats-server exited with " + p.exitValue() + server.logTail());
                }
                if (System.nanoTime() > deadline) {
                    server.close();
                    throw new IllegalStateException("nats-server did not accept connections within 15 s" + server.logTail());
                }
                Thread.sleep(50);
            }
            return server;
        } catch (IOException | RuntimeException | InterruptedException e) {
            BenchSupport.deleteTree(dir);
            throw e;
        }
    }

    private boolean accepting() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    String url() {
        return "nats://127.0.0.1:" + port;
    }

    long pid() {
        return process.pid();
    }

    String version() {
        return version;
    }

    Path binary() {
        return binary;
    }

    String logTail() {
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long len = f.length();
            long from = Math.max(0, len - 4000);
            byte[] b = new byte[(int) (len - from)];
            f.seek(from);
            f.readFully(b);
            return "\n--- nats-server log (tail) ---\n" + new String(b, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** Stops the server by PID (SIGTERM, SIGKILL after 10 s) and removes its store directory. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        BenchSupport.deleteTree(dir);
    }
}
