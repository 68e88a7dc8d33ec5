package dev.parley.nats.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.awaitility.core.ConditionTimeoutException;

import static org.awaitility.Awaitility.await;

/**
 * A real server process for one test (nats-server, ngircd): started from a command with its
 * output appended to a log file, ready once that log says it listens on its loopback port,
 * stopped by its PID. {@link #kill()} and {@link #restart()} keep the command and the port, as
 * an operator restarting the server would.
 */
public final class ServerProcess implements AutoCloseable {
    private final String name;
    private final List<String> command;
    private final Path log;
    private final int port;
    private final String announced;
    private Process process;

    private ServerProcess(String name, List<String> command, Path log, int port, String announced) {
        this.name = name;
        this.command = List.copyOf(command);
        this.log = log;
        this.port = port;
        this.announced = announced;
    }

    /**
     * Starts {@code command} (a server called {@code name}) and returns once its log says
     * {@code announced}, the line with which it tells that it listens on {@code port}.
     */
    public static ServerProcess start(String name, List<String> command, Path log, int port, String announced) {
        ServerProcess server = new ServerProcess(name, command, log, port, announced);
        try {
            server.launch();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name, e);
        }
        return server;
    }

    /** The executable {@code name} on the PATH, else the first of {@code known} that exists. */
    public static Optional<Path> find(String name, List<String> known) {
        List<Path> candidates = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(File.pathSeparator)) {
                candidates.add(Path.of(d.isEmpty() ? "." : d, name));
            }
        }
        known.stream().map(Path::of).forEach(candidates::add);
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }

    /**
     * Waits until {@code process} says in its own log (the part written after {@code from}
     * bytes) that it listens, by {@code line}; fails with the log's tail if it exits first or
     * stays silent past {@code atMost} (the log lives in the test's temporary directory). A
     * port that merely answers may be another process's: a port free when a test chose it can be
     * taken by a busy machine's other servers before the child binds it, and then the child
     * exits while the test talks to a stranger.
     */
    public static void awaitAnnounced(Process process, Path log, long from, String line, Duration atMost) {
        try {
            await().atMost(atMost).pollInterval(Duration.ofMillis(50)).until(() -> {
                String written = written(log, from);
                if (written.contains(line)) {
                    return true;
                }
                if (!process.isAlive()) {
                    throw new IllegalStateException("the process exited with " + process.exitValue()
                            + " before it said \"" + line + "\":\n" + tail(written));
                }
                return false;
            });
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("the process did not say \"" + line + "\" within " + atMost + "; its log:\n"
                    + tail(written(log, from)), e);
        }
    }

    private static String written(Path log, long from) {
        try {
            byte[] all = Files.exists(log) ? Files.readAllBytes(log) : new byte[0];
            int start = (int) Math.min(from, all.length);
            return new String(all, start, all.length - start, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String tail(String written) {
        return written.substring(Math.max(0, written.length() - 4000));
    }

    /** The size of {@code log} now (0 when it does not exist yet): where a restarted child's lines begin. */
    public static long logSize(Path log) throws IOException {
        return Files.exists(log) ? Files.size(log) : 0;
    }

    /**
     * A loopback port free now, for a server a test starts (or starts again) on it later. Drawn
     * below the kernel's ephemeral range (from 32768 on Linux by default): a port from that range,
     * as a bind to port 0 returns, can be taken by any outgoing connection on the machine before
     * the server binds it, which on a busy machine running the suite failed a run; below the range
     * only an explicit bind takes a port. The bench's {@code BenchSupport.freePort} draws alike.
     */
    public static int freePort() throws IOException {
        for (int tries = 0; tries < 1000; tries++) {
            int port = ThreadLocalRandom.current().nextInt(10_000, 32_768);
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
                return port;
            } catch (BindException taken) {
                // another server's: draw again
            }
        }
        throw new IOException("no loopback port free between 10000 and 32767");
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process.pid();
    }

    /** What the server wrote so far. */
    public String log() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** Stops the server by its PID with SIGKILL: no goodbye to clients. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** Starts the server again with the same command, on the same port. */
    public void restart() throws IOException {
        launch();
    }

    /** SIGTERM, then SIGKILL if it has not stopped within ten seconds. */
    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }

    private void launch() throws IOException {
        long from = logSize(log);
        process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        try {
            awaitAnnounced(process, log, from, announced, Duration.ofSeconds(20));
        } catch (RuntimeException e) {
            process.destroyForcibly();
            throw new IllegalStateException(name + " did not start: " + e.getMessage(), e);
        }
    }
}
