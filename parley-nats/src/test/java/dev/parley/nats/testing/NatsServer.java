package dev.parley.nats.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;

import static org.awaitility.Awaitility.await;

/**
 * A real nats-server process for one test: on a free loopback port (never 4222), its store and
 * log in a directory the test owns, either plain {@code -js} (federation's development mode) or
 * from a configuration file (e.g. {@code NatsAuthority.serverConfig}). Ready once a TCP
 * connection succeeds; stopped by its PID. {@link #kill()} and {@link #restart()} keep the port,
 * the configuration and the store, as an operator restarting the server would.
 */
public final class NatsServer implements AutoCloseable {
    private static final List<String> BINARIES = List.of("/usr/sbin/nats-server", "/usr/local/bin/nats-server",
            "/usr/bin/nats-server");

    private final ServerProcess process;

    private NatsServer(ServerProcess process) {
        this.process = process;
    }

    /** Whether a nats-server binary is installed (tests that need one may skip, saying so, if not). */
    public static boolean installed() {
        return find().isPresent();
    }

    /** {@code nats-server -js} with its store under {@code dir}: no authentication. */
    public static NatsServer startJetStream(Path dir) {
        return start(dir, Optional.empty(), "127.0.0.1");
    }

    /**
     * As {@link #startJetStream(Path)}, listening on {@code host} (0.0.0.0: every interface, for
     * clients in other network namespaces; {@link #url()} still names loopback).
     */
    public static NatsServer startJetStream(Path dir, String host) {
        return start(dir, Optional.empty(), host);
    }

    /**
     * nats-server from a configuration file written to {@code dir}: {@code listen} on the free
     * port followed by what {@code config} makes of the store directory.
     */
    public static NatsServer start(Path dir, Function<Path, String> config) {
        return start(dir, Optional.of(config), "127.0.0.1");
    }

    private static NatsServer start(Path dir, Optional<Function<Path, String>> config, String host) {
        Path binary = find().orElseThrow(() -> new IllegalStateException(
                "nats-server is not installed (apt-get install nats-server)"));
        try {
            Path store = Files.createDirectories(dir.resolve("store"));
            int port = freePort();
            List<String> command = new ArrayList<>(List.of(binary.toString()));
            if (config.isPresent()) {
                Path file = dir.resolve("nats-server.conf");
                Files.writeString(file, "listen: \"" + host + ":" + port + "\"\n" + config.get().apply(store));
                command.addAll(List.of("-c", file.toString()));
            } else {
                command.addAll(List.of("-js", "-a", host, "-p", Integer.toString(port), "-sd", store.toString()));
            }
            return new NatsServer(ServerProcess.start("nats-server", command, dir.resolve("nats-server.log"), port,
                    "Listening for client connections on " + host + ":" + port + "\n"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start nats-server", e);
        }
    }

    /**
     * A NATS cluster: {@code size} nats-server processes with JetStream, routed to each other,
     * named {@code n1}… in that order, each with its own store under {@code dir}. Returns once
     * JetStream can place a stream with {@code size} replicas (its meta leader is elected).
     */
    public static List<NatsServer> cluster(Path dir, int size) {
        List<NatsServer> servers = new ArrayList<>();
        try {
            List<Integer> routePorts = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                routePorts.add(freePort());
            }
            String routes = String.join(", ", routePorts.stream().map(p -> "\"nats-route://127.0.0.1:" + p + "\"")
                    .toList());
            for (int i = 0; i < size; i++) {
                int n = i;
                servers.add(start(dir.resolve("n" + (n + 1)), store -> "server_name: n" + (n + 1) + "\n"
                        + "jetstream { store_dir: \"" + store + "\" }\n"
                        + "cluster {\n  name: parley-test\n  listen: \"127.0.0.1:" + routePorts.get(n) + "\"\n"
                        + "  routes: [" + routes + "]\n}\n"));
            }
            String urls = clusterUrl(servers);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                    .until(() -> placesReplicatedStream(urls, size));
            return servers;
        } catch (IOException | RuntimeException e) {
            servers.forEach(NatsServer::closeQuietly);
            throw e instanceof IOException io ? new UncheckedIOException("cannot start a NATS cluster", io)
                    : (RuntimeException) e;
        }
    }

    /** The servers' URLs separated by commas, as a client of the cluster is given them. */
    public static String clusterUrl(List<NatsServer> servers) {
        return String.join(",", servers.stream().map(NatsServer::url).toList());
    }

    private static boolean placesReplicatedStream(String urls, int replicas) throws Exception {
        try (Connection probe = Nats.connect(Options.builder().server(urls).connectionTimeout(Duration.ofSeconds(2))
                .build())) {
            JetStreamManagement jsm = probe.jetStreamManagement();
            jsm.addStream(StreamConfiguration.builder().name("PROBE").subjects("probe.cluster")
                    .storageType(StorageType.Memory).replicas(replicas).build());
            jsm.deleteStream("PROBE");
            return true;
        }
    }

    private void closeQuietly() {
        try {
            close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public String url() {
        return "nats://127.0.0.1:" + process.port();
    }

    public int port() {
        return process.port();
    }

    public long pid() {
        return process.pid();
    }

    /** The server's log so far (it logs every permission violation, naming the user). */
    public String log() {
        return process.log();
    }

    /** Stops the server by its PID with SIGKILL: no goodbye to clients. */
    public void kill() throws InterruptedException {
        process.kill();
    }

    /** Starts the server again on the same port, configuration and store. */
    public void restart() throws IOException {
        process.restart();
    }

    /** SIGTERM, then SIGKILL if it has not stopped within ten seconds. */
    @Override
    public void close() throws InterruptedException {
        process.close();
    }

    private static int freePort() throws IOException {
        return ServerProcess.freePort();
    }

    private static Optional<Path> find() {
        return ServerProcess.find("nats-server", BINARIES);
    }
}
