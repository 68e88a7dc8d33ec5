package dev.parley.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.core.OwnerAckPolicy;
import dev.parley.nats.GatewayConfig;
import dev.parley.server.HubConfig;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code parley serve} as operators run it: a child process stopped with SIGTERM, with the
 * log levels they chose. Logs are read from the child's stderr, one JSON object a line.
 */
class ServeProcessTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private Process hub;

    @AfterEach
    void kill() throws InterruptedException {
        if (hub != null && hub.isAlive()) {
            hub.destroyForcibly();
            hub.waitFor(15, TimeUnit.SECONDS);
        }
    }

    @Test
    void sigtermStopsTheHubCleanlyAndExitsZero() throws Exception {
        URI url = serve();
        try (Socket client = new Socket()) {
            client.connect(new InetSocketAddress(url.getHost(), url.getPort()), 5_000); // a connection open at the stop
            hub.destroy(); // SIGTERM
            assertTrue(hub.waitFor(60, TimeUnit.SECONDS), "the hub did not stop after SIGTERM");
        }
        assertEquals(0, hub.exitValue(), this::log);
        List<JsonNode> lines = logLines();
        assertTrue(lines.stream().anyMatch(l -> l.path("msg").asText().equals("parley hub stopped")), this::log);
        assertTrue(lines.stream().noneMatch(l -> l.path("level").asText().equals("FINE")), "FINE is off by default");
    }

    /**
     * A hub killed with SIGKILL while an agent's command runs leaves that command orphaned; the
     * next hub on the same data kills it (found by PID and start time) before the agent runs
     * again, and the envelope is taken again and answered once.
     */
    @Test
    void aHubKilledUnderAnAgentsCommandKillsItsLeftoverOnRestartAndAnswersTheEnvelope() throws Exception {
        Scene scene = sendToAgent("""
                command: [sh, -c, "if [ -e done ]; then tr a-z A-Z; else touch done; exec sleep 602; fi"]
                """);
        String id = scene.id();
        String lead = scene.lead();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> leftover().isPresent());
        ProcessHandle command = leftover().orElseThrow();

        hub.destroyForcibly(); // SIGKILL: the command is orphaned, not stopped
        hub.waitFor(30, TimeUnit.SECONDS);
        assertTrue(command.isAlive(), "the scenario: a command outlives a hub killed with SIGKILL");

        String again = serve().toString();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !command.isAlive());
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> "replied".equals(
                CliRun.parley("status", id, "--json", "--url", again, "--token", lead).json().path("state").asText()));
        String logs = CliRun.parley("agent", "logs", "slow", "--url", again, "--token", lead).out();
        assertTrue(logs.contains("killed the command (pid " + command.pid() + ")"), logs);
    }

    /**
     * The same with a {@code runner: process} agent (the example shell agent) holding a claim:
     * its process is orphaned by the SIGKILL, killed by the next hub, and the envelope, still
     * claimed, is taken up again and answered.
     */
    @Test
    void aHubKilledUnderAProcessAgentHoldingAClaimKillsTheOrphanAndTheEnvelopeIsAnswered() throws Exception {
        Path shellAgent = Path.of("..", "examples", "agents", "shell-agent.sh").toAbsolutePath().normalize();
        org.junit.jupiter.api.Assumptions.assumeTrue(onPath("curl") && onPath("jq"),
                "the example shell agent needs curl and jq");
        Scene scene = sendToAgent("""
                runner: process
                command: [sh, %s, sh, -c, "if [ -e done ]; then tr a-z A-Z; else touch done; exec sleep 603; fi"]
                """.formatted(shellAgent));
        String id = scene.id();
        String lead = scene.lead();
        String url = scene.url();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> sleeping("603").isPresent());
        ProcessHandle command = sleeping("603").orElseThrow();
        assertEquals("processing", CliRun.parley("status", id, "--json", "--url", url, "--token", lead).json()
                .path("state").asText(), "claimed by the agent's process");

        hub.destroyForcibly(); // SIGKILL: the agent's process and its command are orphaned
        hub.waitFor(30, TimeUnit.SECONDS);
        assertTrue(command.isAlive(), "the scenario: an agent's process outlives a hub killed with SIGKILL");

        String again = serve().toString();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !command.isAlive());
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> "replied".equals(
                CliRun.parley("status", id, "--json", "--url", again, "--token", lead).json().path("state").asText()));
        String logs = CliRun.parley("agent", "logs", "slow", "--url", again, "--token", lead).out();
        assertTrue(logs.contains("the hub's previous run left running"), logs);
        assertTrue(sleeping("603").isEmpty(), "no orphan left");
    }

    /** A hub process, its node lead, and lead's "again" sent to agent slow (lead its parent, {@code spec} the rest). */
    private Scene sendToAgent(String spec) throws Exception {
        String url = serve().toString();
        String admin = Files.readString(tmp.resolve("data").resolve("admin.token")).strip();
        String lead = CliRun.parley("node", "add", "lead", "--json", "--url", url, "--token", admin).json()
                .path("token").asText();
        Path file = tmp.resolve("slow.yaml");
        Files.writeString(file, "id: slow\nparent: lead\nworkdir: " + tmp + "\n" + spec);
        assertEquals(0, CliRun.parley("agent", "start", "--spec", file.toString(), "--url", url, "--token", admin).exit);
        String id = CliRun.parley("send", "--to", "slow", "again", "--json", "--url", url, "--token", lead).json()
                .path("id").asText();
        return new Scene(url, lead, id);
    }

    private record Scene(String url, String lead, String id) {
    }

    private static boolean onPath(String program) {
        return java.util.Arrays.stream(System.getenv("PATH").split(":"))
                .anyMatch(dir -> Files.isExecutable(Path.of(dir, program)));
    }

    /** The agent's command this test started, while it runs. */
    private static Optional<ProcessHandle> leftover() {
        return ProcessHandle.allProcesses().filter(p -> p.info().commandLine().orElse("").contains("sleep 602"))
                .findFirst();
    }

    /** A {@code sleep SECONDS} process (not the shell whose script names it). */
    private static Optional<ProcessHandle> sleeping(String seconds) {
        return ProcessHandle.allProcesses().filter(p -> p.info().command().orElse("").endsWith("/sleep")
                && java.util.Arrays.equals(p.info().arguments().orElse(new String[0]), new String[] {seconds}))
                .findFirst();
    }

    @Test
    void logLevelsApplyToEveryLoggerAndToOneLoggerAndThoseUnderIt() throws Exception {
        URI url = serve("--idle-timeout", "200ms", "--log-level", "warn",
                "--log-level", "dev.parley.server.http.Connections=FINE");
        try (Socket idle = new Socket()) {
            idle.connect(new InetSocketAddress(url.getHost(), url.getPort()), 5_000);
            idle.setSoTimeout(30_000);
            InputStream in = idle.getInputStream();
            assertEquals(-1, in.read(), "the hub closes a connection that sends no request");
        }
        hub.destroy();
        assertTrue(hub.waitFor(60, TimeUnit.SECONDS), "the hub did not stop after SIGTERM");
        assertEquals(0, hub.exitValue(), this::log);

        List<JsonNode> lines = logLines();
        assertTrue(lines.stream().anyMatch(l -> l.path("level").asText().equals("FINE")
                && l.path("logger").asText().equals("dev.parley.server.http.Connections")
                && l.path("msg").asText().contains("no request within 200 ms")), this::log);
        assertTrue(lines.stream().noneMatch(l -> l.path("level").asText().equals("INFO")),
                () -> "--log-level warn lets INFO through:\n" + log());
    }

    @Test
    void badLogLevelsAndConnectionLimitsAreUsageErrors() {
        assertUsageErrors(List.of(new String[] {"--log-level", "LOUD"}, new String[] {"--log-level", "a b=FINE"},
                new String[] {"--header-timeout", "0s"}, new String[] {"--body-timeout", "5ms"},
                new String[] {"--max-connections-per-address", "0"}));
    }

    @Test
    void gatewayOptionsGoTogetherAndNameAValidGateway() {
        assertUsageErrors(List.of(new String[] {"--gateway", "a"}, new String[] {"--nats", "nats://127.0.0.1:1"},
                new String[] {"--gateway", "a.b", "--nats", "nats://127.0.0.1:1"},
                new String[] {"--nats-creds", "x.creds"}, new String[] {"--nats-replicas", "3"},
                new String[] {"--gateway", "a", "--nats", "nats://127.0.0.1:1", "--nats-replicas", "7"},
                new String[] {"--owner-ack-window", "5s"},
                new String[] {"--gateway", "a", "--nats", "nats://127.0.0.1:1", "--owner-ack-publications", "0"},
                new String[] {"--gateway", "a", "--nats", "nats://127.0.0.1:1", "--owner-ack-window", "0s"}));
        CommandLine cli = new CommandLine(new ServeCommand());
        cli.parseArgs("--data", tmp.toString(), "--gateway", "gw-1", "--nats", "nats://127.0.0.1:4333", "--nats-creds",
                "gw-1.creds");
        assertEquals(Optional.of(new GatewayConfig("gw-1", "nats://127.0.0.1:4333", Optional.of(Path.of("gw-1.creds")))),
                ((ServeCommand) cli.getCommand()).config().gateway());
        CommandLine cluster = new CommandLine(new ServeCommand());
        cluster.parseArgs("--data", tmp.toString(), "--gateway", "gw-1", "--nats",
                "nats://10.0.0.1:4222,nats://10.0.0.2:4222,nats://10.0.0.3:4222", "--nats-replicas", "3",
                "--owner-ack-window", "2m", "--owner-ack-publications", "8");
        assertEquals(Optional.of(new GatewayConfig("gw-1", "nats://10.0.0.1:4222,nats://10.0.0.2:4222,nats://10.0.0.3:4222",
                Optional.empty(), 3, new OwnerAckPolicy(Duration.ofMinutes(2), 8))),
                ((ServeCommand) cluster.getCommand()).config().gateway());
        CommandLine single = new CommandLine(new ServeCommand());
        single.parseArgs("--data", tmp.toString());
        assertEquals(Optional.empty(), ((ServeCommand) single.getCommand()).config().gateway(), "single-host by default");
    }

    @Test
    void connectionOptionsReachTheHubConfig() {
        CommandLine cli = new CommandLine(new ServeCommand());
        cli.parseArgs("--data", tmp.toString(), "--idle-timeout", "2m", "--header-timeout", "5s", "--body-timeout",
                "45s", "--max-connections-per-address", "64");
        assertEquals(new HubConfig.Transport(Duration.ofMinutes(2), Duration.ofSeconds(5), Duration.ofSeconds(45), 64),
                ((ServeCommand) cli.getCommand()).config().transport());
        CommandLine defaults = new CommandLine(new ServeCommand());
        defaults.parseArgs("--data", tmp.toString());
        assertEquals(HubConfig.Transport.DEFAULTS, ((ServeCommand) defaults.getCommand()).config().transport());
    }

    /** Starts {@code parley serve} on a free port; returns its URL once it listens. */
    private URI serve(String... options) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), "dev.parley.cli.Main", "serve",
                "--data", tmp.resolve("data").toString(), "--port", "0"));
        command.addAll(List.of(options));
        hub = new ProcessBuilder(command)
                .redirectError(tmp.resolve("stderr.log").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        BufferedReader stdout = new BufferedReader(new InputStreamReader(hub.getInputStream(), StandardCharsets.UTF_8));
        String first = stdout.readLine(); // blocks until the hub listens, or ends when it dies
        assertNotNull(first, this::log);
        assertTrue(first.startsWith("parley hub listening on "), first);
        return URI.create(first.substring("parley hub listening on ".length()).strip());
    }

    private List<JsonNode> logLines() throws IOException {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : Files.readAllLines(tmp.resolve("stderr.log"), StandardCharsets.UTF_8)) {
            if (line.startsWith("{")) {
                lines.add(JSON.readTree(line));
            }
        }
        return lines;
    }

    private String log() {
        try {
            return "\n--- hub stderr ---\n" + Files.readString(tmp.resolve("stderr.log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no hub stderr: " + e + ")";
        }
    }

    /** Each set of serve options is refused as a usage error before the data directory is touched. */
    private void assertUsageErrors(List<String[]> optionSets) {
        for (String[] args : optionSets) {
            CliRun run = new CliRun();
            List<String> all = new ArrayList<>(List.of("serve", "--port", "0", "--data", tmp.resolve("unused").toString()));
            all.addAll(List.of(args));
            run.execute(all.toArray(String[]::new));
            assertEquals(ExitStatus.USAGE, run.exit, run::describe);
            assertFalse(Files.exists(tmp.resolve("unused")), "a refused serve must not touch the data directory");
        }
    }
}
