package dev.parley.server.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture.Resp;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Malformed JSON in every shape Jackson refuses (too deep, a number too long, bytes that are
 * not UTF-8, a key twice, a name too long, trailing content, comments, NaN …) sent to every
 * surface that parses a body (REST, A2A JSON-RPC and HTTP+JSON, MCP, admission, schemas) and
 * to the policy file: each answer is a 4xx in the user's words, never a Java class, package
 * or library setting.
 */
class BadJsonWordsTest {
    /** What must never reach a client. */
    private static final List<String> INTERNALS = List.of("com.", "java.", "fasterxml", "Exception", "Constraints",
            "Feature", "`", "jackson", "jetty", "eclipse");

    @TempDir
    static Path dir;
    static HubFixture hub;
    static Path policy;
    static String leadToken;
    static String workerToken;

    @BeforeAll
    static void start() throws Exception {
        policy = dir.resolve("policy.json");
        Files.writeString(policy, "{\"rules\": []}");
        hub = HubFixture.start(dir.resolve("data"), c -> c.withPolicy(Optional.of(policy))
                .withPolicyReloadInterval(Duration.ofMillis(50)));
        leadToken = hub.createNode("lead", null);
        workerToken = hub.createNode("worker", "lead");
    }

    @AfterAll
    static void stop() {
        hub.close();
    }

    /** The bodies, by what is wrong with them, and the words the answer must use (lower case). */
    private static Map<String, Bad> bodies() {
        Map<String, Bad> out = new LinkedHashMap<>();
        out.put("nesting 1500 deep", new Bad(utf8("{\"to\":\"lead\",\"data\":" + "[".repeat(1500)
                + "]".repeat(1500) + "}"), "nesting deeper than 1000"));
        out.put("a 2000-digit number", new Bad(utf8("{\"to\":\"lead\",\"data\":" + "9".repeat(2000) + "}"),
                "longer than 1000 digits"));
        out.put("bytes that are not UTF-8", new Bad(concat(utf8("{\"to\":\"lead\",\"text\":\""),
                new byte[] {(byte) 0xff, (byte) 0xfe, 'a'}, utf8("\"}")), "utf-8"));
        out.put("a key twice", new Bad(utf8("{\"to\":\"lead\",\"to\":\"worker\",\"text\":\"x\"}"), "\"to\" appears twice"));
        out.put("a 60000-character key", new Bad(utf8("{\"" + "k".repeat(60_000) + "\":1}"),
                "longer than 50000 characters"));
        out.put("trailing content", new Bad(utf8("{\"to\":\"lead\",\"text\":\"x\"} {\"b\":2}"), "after"));
        out.put("a comment", new Bad(utf8("{\"to\":\"lead\" /* hi */, \"text\":\"x\"}"), "line 1"));
        out.put("NaN", new Bad(utf8("{\"to\":\"lead\",\"data\":NaN}"), "nan"));
        out.put("unterminated", new Bad(utf8("{\"to\":\"lead\",\"text\":\"x\""), "ends"));
        out.put("a control character in a string", new Bad(utf8("{\"to\":\"lead\",\"text\":\"a\u0001b\"}"), "line 1"));
        out.put("a leading zero", new Bad(utf8("{\"to\":\"lead\",\"data\":012}"), "line 1"));
        out.put("single quotes", new Bad(utf8("{'to':'lead'}"), "line 1"));
        return out;
    }

    private record Bad(byte[] body, String words) {
    }

    private record Surface(String method, String path, String token, Map<String, String> headers) {
    }

    private static List<Surface> surfaces() {
        Map<String, String> json = Map.of("Content-Type", "application/json");
        Map<String, String> mcp = Map.of("Content-Type", "application/json", "Accept",
                "application/json, text/event-stream");
        return List.of(
                new Surface("POST", "/v1/messages", workerToken, json),
                new Surface("POST", "/v1/nodes", hub.admin(), json),
                new Surface("PUT", "/v1/schemas/note", hub.admin(), json),
                new Surface("POST", "/v1/tasks", workerToken, json),
                new Surface("POST", "/v1/auth/exchange", null, json),
                new Surface("POST", "/a2a/lead", workerToken, Map.of("Content-Type", "application/json",
                        "A2A-Version", "1.0")),
                new Surface("POST", "/a2a/lead", workerToken, json),
                new Surface("POST", "/a2a/lead/message:send", workerToken, Map.of("Content-Type", "application/json",
                        "A2A-Version", "1.0")),
                new Surface("POST", "/mcp", workerToken, mcp));
    }

    @Test
    void everySurfaceSaysWhatIsWrongInTheUsersWords() {
        List<String> problems = new ArrayList<>();
        for (Surface surface : surfaces()) {
            bodies().forEach((what, bad) -> {
                Resp r = hub.request(surface.method(), surface.path(), surface.token(), bad.body(), surface.headers());
                String where = surface.method() + " " + surface.path() + " " + surface.headers().getOrDefault(
                        "A2A-Version", "") + " with " + what + ": " + r;
                if (r.status() >= 500) {
                    problems.add("server error for " + where);
                }
                INTERNALS.stream().filter(r.body()::contains).findFirst()
                        .ifPresent(leak -> problems.add("'" + leak + "' leaks from " + where));
                if (!message(r).toLowerCase(Locale.ROOT).contains(bad.words())) {
                    problems.add("no '" + bad.words() + "' in " + where);
                }
            });
        }
        assertTrue(problems.isEmpty(), () -> problems.size() + " problem(s):\n" + String.join("\n", problems));
    }

    @Test
    void aPolicyFileTooDeepIsRefusedInTheOperatorsWords() throws Exception {
        Files.writeString(policy, "{\"rules\": " + "[".repeat(1500) + "]".repeat(1500) + "}");
        JsonNode error = await().atMost(Duration.ofSeconds(10)).until(
                () -> hub.get(hub.admin(), "/v1/policy").json().path("lastError"), e -> !e.isMissingNode()
                        && !e.isNull());
        String text = error.toString();
        assertTrue(text.contains("nesting deeper than 1000"), text);
        INTERNALS.forEach(leak -> assertTrue(!text.contains(leak), () -> "'" + leak + "' leaks: " + text));
    }

    @Test
    void aSchemaTheHubCannotCompileIsRefusedInTheUsersWords() {
        Map<String, String> schemas = Map.of(
                "{\"$ref\":\"urn:nowhere#/x\"}", "urn:nowhere",
                "{\"$ref\":\"#/$defs/missing\"}", "/$defs/missing",
                "{\"type\":\"string\",\"pattern\":\"[\"}", "regular expression");
        schemas.forEach((schema, words) -> {
            Resp r = hub.request("PUT", "/v1/schemas/note", hub.admin(), utf8(schema), Map.of());
            assertEquals(400, r.status(), r::toString);
            assertTrue(r.text("message").contains(words), () -> "no '" + words + "' in " + r);
            INTERNALS.forEach(leak -> assertTrue(!r.body().contains(leak), () -> "'" + leak + "' leaks: " + r));
        });
    }

    @Test
    void requestsTheHttpLayerRefusesAreAnsweredInWordsToo() throws Exception {
        // The HTTP layer refuses these before any route: each still gets the contract's body and no internals.
        String token = "Authorization: Bearer " + workerToken + "\r\n";
        List<byte[]> requests = List.of(
                utf8("GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n"),
                utf8("GET /healthz HTTP/1.0\r\n\r\n"),
                utf8("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
                utf8("GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"),
                utf8("GET /healthz HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"),
                utf8("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\nConnection: close\r\n\r\n"),
                utf8("GET /%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
                utf8("GET /v1/inbox?after=%zz HTTP/1.1\r\nHost: x\r\n" + token + "Connection: close\r\n\r\n"),
                utf8("GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\nConnection: close\r\n\r\n"),
                utf8("POST /v1/messages HTTP/1.1\r\nHost: x\r\n" + token
                        + "Transfer-Encoding: gzip\r\nConnection: close\r\n\r\n"),
                utf8("HELLO\r\n\r\n"),
                concat(utf8("GET /v1/nodes/"), new byte[] {(byte) 0xff, (byte) 0xfe}, utf8(" HTTP/1.1\r\nHost: x\r\n"
                        + token + "Connection: close\r\n\r\n")));
        List<String> problems = new ArrayList<>();
        for (byte[] request : requests) {
            String answer = raw(request);
            String first = new String(request, StandardCharsets.ISO_8859_1).lines().findFirst().orElse("");
            if (answer.isEmpty()) {
                continue; // closed without an answer: nothing leaked
            }
            if (answer.startsWith("HTTP/1.1 5") && !answer.startsWith("HTTP/1.1 505")) {
                problems.add("server error for " + first + ": " + answer);
            }
            if (answer.matches("(?s)HTTP/1\\.1 [45].*") && !answer.matches("(?s).*\\{\"error\":\"[a-z_]+\",\"message\":\"[^\"]+\".*")) {
                problems.add("no contract error body for " + first + ": " + answer);
            }
            INTERNALS.stream().filter(answer::contains).findFirst()
                    .ifPresent(leak -> problems.add("'" + leak + "' leaks for " + first + ": " + answer));
        }
        assertTrue(problems.isEmpty(), () -> String.join("\n", problems));
    }

    /** Sends one request on its own connection; the first answer (head and Content-Length body), or "" on close. */
    private static String raw(byte[] request) throws Exception {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", hub.port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(request);
            socket.getOutputStream().flush();
            java.io.InputStream in = socket.getInputStream();
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    return head.toString(StandardCharsets.UTF_8);
                }
                head.write(b);
            }
            String headers = head.toString(StandardCharsets.ISO_8859_1);
            java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?im)^content-length:\\s*(\\d+)")
                    .matcher(headers);
            byte[] body = length.find() ? in.readNBytes(Integer.parseInt(length.group(1))) : new byte[0];
            return headers + new String(body, StandardCharsets.UTF_8);
        }
    }

    /** The sentence of an answer: the contract's, JSON-RPC's or google.rpc.Status's message. */
    private static String message(Resp r) {
        if (r.json() == null) {
            return r.body();
        }
        JsonNode error = r.json().path("error");
        return error.isObject() ? error.path("message").asText() : r.json().path("message").asText();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }
}
