package dev.parley.cli.crash;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.bench.BenchHub;
import dev.parley.bench.http.HttpConnection;
import dev.parley.nats.testing.ServerProcess;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A hub in a child process of the test's JVM, on a data directory that outlives it: started,
 * killed with SIGKILL and started again by the crash tests. Its output goes to one log file
 * across restarts, whose tail the tests' failure messages carry.
 */
final class ChildHub implements AutoCloseable {
    static final String ADMIN = "pa_crash-recovery-test-0123456789abcdef";
    static final ObjectMapper JSON = new ObjectMapper();

    private final Path data;
    private final Path log;
    private Process process;
    private int port;

    ChildHub(Path data, Path log) {
        this.data = data;
        this.log = log;
    }

    /** Starts the hub on a free port and returns once it has announced that it listens there. */
    void start() throws IOException {
        port = ServerProcess.freePort();
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m",
                "-cp", System.getProperty("java.class.path"),
                "dev.parley.cli.Main", "serve", "--data", data.toString(), "--port", Integer.toString(port));
        pb.environment().put("PARLEY_ADMIN_TOKEN", ADMIN);
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Files.writeString(log, "---- starting hub on port " + port + "\n", StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        long from = ServerProcess.logSize(log);
        process = pb.start();
        // Its own line, not any answer on the port: a port free when chosen may be another server's
        // by the time this JVM binds it (seen once on a busy machine: a stranger hub answered 401).
        // A fresh JVM at load 27 on two cores took 37 s to reach its first line of test code.
        // The bound is for a hang, not a measure.
        ServerProcess.awaitAnnounced(process, log, from, "listening on http://127.0.0.1:" + port + " ",
                Duration.ofSeconds(120));
    }

    /** Kills the hub with SIGKILL, waits for it to be gone and returns its exit status. */
    int kill() throws InterruptedException {
        Process victim = process;
        victim.destroyForcibly();
        assertTrue(victim.waitFor(15, TimeUnit.SECONDS), "the hub did not die after SIGKILL");
        assertFalse(victim.isAlive());
        int exit = victim.exitValue();
        assertNotEquals(0, exit, "a SIGKILLed hub exits non-zero (137 on Linux)");
        return exit;
    }

    int port() {
        return port;
    }

    /** A keep-alive connection to the hub as it runs now. */
    HttpConnection connect(int readTimeoutMillis) {
        return new HttpConnection("127.0.0.1", port, readTimeoutMillis);
    }

    /** Creates a node of kind external (under {@code parent}, if any) and returns its token. */
    String createNode(String id, String parent) throws IOException {
        ObjectNode body = JSON.createObjectNode().put("id", id).put("kind", "external");
        if (parent != null) {
            body.put("parent", parent);
        }
        HttpConnection c = connect(10_000);
        try {
            HttpConnection.Response res = c.call("POST", "/v1/nodes", ADMIN, body.toString());
            assertEquals(201, res.status(), "POST /v1/nodes " + body + ": " + res.body());
            String token = JSON.readTree(res.body()).path("token").asText(null);
            assertNotNull(token, "no token in " + res.body());
            return token;
        } finally {
            c.close();
        }
    }

    /** Every envelope in {@code node}'s inbox, in seq order, read as the admin (which takes no delivery). */
    List<JsonNode> readInbox(HttpConnection c, String node) throws IOException {
        List<JsonNode> all = new ArrayList<>();
        long after = 0;
        while (true) {
            HttpConnection.Response res = c.call("GET", "/v1/nodes/" + node + "/inbox?after=" + after + "&limit=1000",
                    ADMIN, null);
            assertEquals(200, res.status(), "GET inbox of " + node + ": " + res.body());
            JsonNode page = JSON.readTree(res.body());
            JsonNode items = page.path("items");
            assertTrue(items.isArray(), "inbox page without items: " + res.body());
            if (items.isEmpty()) {
                return all;
            }
            items.forEach(all::add);
            long next = page.path("next").asLong(-1);
            assertTrue(next > after, "inbox of " + node + ": next " + next + " does not advance past " + after);
            after = next;
        }
    }

    /** The last lines of the hub's log, for a failure message. */
    String logTail() {
        return BenchHub.logTail(log, 6000);
    }

    /** Kills a hub still running (a test that failed half-way). */
    @Override
    public void close() throws InterruptedException {
        Process p = process;
        if (p != null && p.isAlive()) {
            p.destroyForcibly();
            p.waitFor(15, TimeUnit.SECONDS);
        }
    }
}
