package dev.parley.server.push;

import dev.parley.server.Hub;
import dev.parley.server.HubConfig;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/** A hub in its own JVM, for tests that kill it with SIGKILL: {@code HubProcess <dataDir> <port> <adminToken>}. */
public final class HubProcess {
    /**
     * How long a fresh hub JVM may take to answer {@code /healthz}: at load 27 on two cores a JVM
     * took 37 s to reach its first line of test code. A bound for a hang, not a measure.
     */
    static final Duration STARTUP = Duration.ofSeconds(120);

    private HubProcess() {
    }

    public static void main(String[] args) throws InterruptedException {
        Hub hub = Hub.start(HubConfig.defaults(Path.of(args[0])).withPort(Integer.parseInt(args[1]))
                .withAdminToken(Optional.of(args[2])));
        hub.awaitClosed();
    }

    /** Starts one on {@code port}, logging to {@code log}. */
    static Process spawn(Path dataDir, int port, String adminToken, Path log) throws java.io.IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        return new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), HubProcess.class.getName(), dataDir.toString(),
                Integer.toString(port), adminToken)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
    }
}
