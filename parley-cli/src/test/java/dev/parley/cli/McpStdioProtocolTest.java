package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bridge's stdio as raw bytes: every line on stdout is a JSON-RPC message (logs go to
 * stderr), and malformed JSON, batches, unknown methods, wrong parameter types, oversized
 * lines and tool calls with missing arguments get the specification's error codes or
 * {@code isError} results — and the bridge keeps serving after each of them.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class McpStdioProtocolTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path data;

    private Hub hub;
    private String workerToken;

    @BeforeEach
    void start() throws Exception {
        hub = Hub.start(HubConfig.defaults(data.resolve("hub")).withPort(0));
        createNode("lead", null);
        workerToken = createNode("worker", "lead");
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    private String createNode(String id, String parent) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("id", id);
        if (parent != null) {
            body.put("parent", parent);
        }
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(hub.url() + "/v1/nodes"))
                .header("Authorization", "Bearer " + hub.adminToken()).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(201, r.statusCode(), r.body());
        return JSON.readTree(r.body()).path("token").asText();
    }

    /** One run of the bridge: the lines written, then stdin closed; stdout, stderr and the exit code. */
    private record Run(int exit, List<String> stdout, String stderr) {
    }

    /**
     * Writes {@code lines} to a bridge; once its answer to request {@code lastId} is on stdout
     * (as a client waits for its answers; without {@code lastId}, at once) closes stdin.
     */
    private Run run(String token, List<String> lines, Integer lastId, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(McpBridgeProcess.javaBin());
        command.addAll(McpBridgeProcess.command(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("PARLEY_URL", hub.url());
        builder.environment().put("PARLEY_TOKEN", token);
        Path out = data.resolve("stdout-" + System.nanoTime());
        Path err = data.resolve("stderr-" + System.nanoTime());
        builder.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process process = builder.start();
        try (OutputStream in = process.getOutputStream()) {
            for (String line : lines) {
                in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                in.flush();
            }
            if (lastId != null) {
                await().atMost(McpBridgeProcess.STARTUP).until(() -> answered(out, lastId));
            }
        } catch (IOException e) {
            // the bridge exited early (a refused start): its exit code tells
        }
        assertTrue(process.waitFor(McpBridgeProcess.STARTUP.toSeconds(), TimeUnit.SECONDS),
                "the bridge exits when stdin ends");
        return new Run(process.exitValue(), Files.readAllLines(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    /** Whether the complete lines on stdout so far hold the answer to request {@code id}. */
    private static boolean answered(Path stdout, int id) throws IOException {
        String text = Files.readString(stdout, StandardCharsets.UTF_8);
        for (String line : text.substring(0, text.lastIndexOf('\n') + 1).split("\n")) {
            if (!line.isBlank() && JSON.readTree(line).path("id").asInt(-1) == id) {
                return true;
            }
        }
        return false;
    }

    private static String rpc(Object id, String method, String params) {
        return "{\"jsonrpc\":\"2.0\"" + (id == null ? "" : ",\"id\":" + JSON.valueToTree(id)) + ",\"method\":\"" + method
                + "\"" + (params == null ? "" : ",\"params\":" + params) + "}";
    }

    @Test
    void stdoutCarriesOnlyJsonRpcAndBadInputGetsSpecErrors() throws Exception {
        String initialize = rpc(1, "initialize", "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}");
        List<String> lines = List.of(
                rpc(100, "tools/list", null),                 // before initialize: refused
                rpc(101, "ping", null),                       // ping is fine before initialize
                "{\"jsonrpc\": \"2.0\", \"id\": 102, \"method\": ",  // truncated JSON
                "[" + rpc(103, "ping", null) + "]",           // batch
                initialize,
                rpc(null, "notifications/initialized", null),
                "",                                           // blank lines are ignored
                rpc(2, "no/such/method", null),
                rpc(3, "tools/list", "[1,2]"),
                rpc(4, "tools/call", "{\"name\":\"send\",\"arguments\":\"to=lead\"}"),
                rpc(5, "tools/call", "{\"name\":42}"),
                rpc(6, "tools/call", "{\"name\":\"send\",\"arguments\":{\"to\":\"lead\"}}"),
                rpc(7, "tools/call", "{\"name\":\"ack\",\"arguments\":{\"id\":7,\"status\":\"processed\"}}"),
                "{\"jsonrpc\":\"1.0\",\"id\":8,\"method\":\"ping\"}",
                "{\"id\":9,\"method\":\"ping\"}",
                "{\"jsonrpc\":\"2.0\",\"id\":12,\"error\":{\"code\":\"abc\",\"message\":\"no\"}}", // a bad response
                "{\"jsonrpc\":\"2.0\",\"id\":13,\"id\":14,\"method\":\"ping\"}", // a key twice
                "x".repeat(4 * 1024 * 1024 + 16),             // oversized line
                rpc(10, "tools/call", "{\"name\":\"send\",\"arguments\":{\"to\":\"lead\",\"text\":\"still here\"}}"),
                rpc(11, "ping", null));
        Run run = run(workerToken, lines, 11, "--name", "worker");
        assertEquals(0, run.exit(), run.stderr());

        Map<String, JsonNode> byId = new HashMap<>();
        List<JsonNode> withoutId = new ArrayList<>();
        for (String line : run.stdout()) {
            JsonNode message = JSON.readTree(line); // throws on anything that is not JSON
            assertTrue(message.isObject(), "stdout line is not a JSON-RPC object: " + line);
            assertEquals("2.0", message.path("jsonrpc").asText(), line);
            if (message.hasNonNull("id")) {
                byId.put(message.get("id").asText(), message);
            } else if (message.has("error")) {
                withoutId.add(message);
            } else {
                assertTrue(message.has("method"), "a notification: " + line);
            }
        }
        assertFalse(run.stderr().isBlank(), "logs go to stderr");

        assertEquals(-32600, byId.get("100").path("error").path("code").asInt(), byId::toString);
        assertEquals("{}", byId.get("101").path("result").toString());
        assertEquals(List.of(-32700, -32600, -32600, -32700, -32600), withoutId.stream()
                        .map(m -> m.path("error").path("code").asInt()).toList(),
                "truncated JSON, batch, a response of the wrong shape, a key twice, oversized line: " + withoutId);
        assertTrue(withoutId.get(3).path("error").path("message").asText().contains("the key \"id\" appears twice"),
                withoutId::toString);
        for (String line : run.stdout()) { // errors are said in the client's words, never in Java's
            for (String internal : List.of("java.", "com.", "fasterxml", "tools.jackson", "Exception", "`")) {
                assertFalse(line.contains(internal), () -> "'" + internal + "' on stdout: " + line);
            }
        }
        assertTrue(byId.get("1").path("result").path("capabilities").path("experimental").has("claude/channel"));
        assertEquals(-32601, byId.get("2").path("error").path("code").asInt());
        assertEquals(-32602, byId.get("3").path("error").path("code").asInt());
        assertEquals(-32602, byId.get("4").path("error").path("code").asInt());
        assertEquals(-32602, byId.get("5").path("error").path("code").asInt());
        JsonNode missing = byId.get("6").path("result");
        assertTrue(missing.path("isError").asBoolean(), missing::toString);
        assertTrue(missing.path("content").get(0).path("text").asText().contains("missing required argument 'text'"));
        JsonNode wrongType = byId.get("7").path("result");
        assertTrue(wrongType.path("isError").asBoolean(), wrongType::toString);
        assertTrue(wrongType.path("content").get(0).path("text").asText().contains("'id' must be a string"));
        assertEquals(-32600, byId.get("8").path("error").path("code").asInt());
        assertEquals(-32600, byId.get("9").path("error").path("code").asInt());
        assertFalse(byId.get("10").path("result").path("isError").asBoolean(), "served after all that: " + byId.get("10"));
        assertEquals("{}", byId.get("11").path("result").toString());
    }

    @Test
    void aTokenOfAnotherNodeIsRefusedBeforeAnyProtocol() throws Exception {
        Run wrongNode = run(workerToken, List.of(), null, "--name", "lead");
        assertEquals(ExitStatus.FORBIDDEN, wrongNode.exit(), wrongNode.stderr());
        assertTrue(wrongNode.stderr().contains("belongs to node worker"), wrongNode.stderr());
        assertTrue(wrongNode.stdout().isEmpty(), "nothing on stdout: " + wrongNode.stdout());

        Run admin = run(hub.adminToken(), List.of(), null, "--name", "worker");
        assertEquals(ExitStatus.FORBIDDEN, admin.exit(), admin.stderr());
        assertTrue(admin.stdout().isEmpty());

        Run unknown = run(workerToken, List.of(), null, "--name", "ghost");
        assertEquals(ExitStatus.NOT_FOUND, unknown.exit(), unknown.stderr());
        assertTrue(unknown.stdout().isEmpty());
    }
}
