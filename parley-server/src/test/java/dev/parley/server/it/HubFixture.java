package dev.parley.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;

/**
 * A real hub started in-process on a loopback port, plus the HTTP helpers the integration
 * tests share. One fixture per test class (or per test when a test needs its own config).
 */
public final class HubFixture implements AutoCloseable {
    public static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicInteger IDS = new AtomicInteger();
    private static final DateTimeFormatter RFC3339_MILLIS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    /** The hub in this JVM; null for a hub reached over the network ({@link #remote}). */
    private final Hub hub;
    private final String url;
    private final String admin;
    private final HttpClient http;

    private HubFixture(Hub hub, String url, String admin) {
        this.hub = hub;
        this.url = url;
        this.admin = admin;
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** Starts a hub with the defaults on a free port. */
    public static HubFixture start(Path dataDir) {
        return start(dataDir, UnaryOperator.identity());
    }

    /** Starts a hub with the defaults on a free port, after {@code customize} adjusts the config. */
    public static HubFixture start(Path dataDir, UnaryOperator<HubConfig> customize) {
        return start(dataDir, customize, System::nanoTime);
    }

    /** As {@link #start(Path, UnaryOperator)}, with rate buckets that refill only as {@code ticker} moves. */
    public static HubFixture start(Path dataDir, UnaryOperator<HubConfig> customize, LongSupplier ticker) {
        return start(dataDir, customize, ticker, () -> java.time.Instant.ofEpochMilli(System.currentTimeMillis()));
    }

    /** As {@link #start(Path, UnaryOperator, LongSupplier)}, with the hub telling the time by {@code clock}. */
    public static HubFixture start(Path dataDir, UnaryOperator<HubConfig> customize, LongSupplier ticker,
                                   java.time.InstantSource clock) {
        HubConfig config = customize.apply(HubConfig.defaults(dataDir).withPort(0));
        Hub hub = Hub.start(config, ticker, clock);
        return new HubFixture(hub, hub.url(), hub.adminToken());
    }

    /**
     * Lifts the node rate limit, for a test in which one node makes more requests than the
     * default burst (400) as fast as the machine allows: a fast machine passes the default
     * 200/s, and a 429 there would fail a test that is about something else. Throttling is
     * {@code RateLimitTest}'s subject.
     */
    public static HubConfig unthrottled(HubConfig config) {
        return config.withNodeRate(1_000_000, 10_000_000);
    }

    /** A hub running elsewhere (another process, another network namespace), reached at {@code url}. */
    public static HubFixture remote(String url, String adminToken) {
        return new HubFixture(null, url, adminToken);
    }

    public Hub hub() {
        if (hub == null) {
            throw new IllegalStateException("a remote hub (" + url + ") is not in this JVM");
        }
        return hub;
    }

    public String url() {
        return url;
    }

    public int port() {
        return URI.create(url).getPort();
    }

    public String admin() {
        return admin;
    }

    /** Stops the hub in this JVM; a remote hub is its process's to stop. */
    @Override
    public void close() {
        if (hub != null) {
            hub.close();
        }
    }

    // ------------------------------------------------------------------ ids and JSON

    /** A fresh node id, unique in this JVM: {@code prefix-N}. */
    public static String uid(String prefix) {
        return prefix + "-" + IDS.incrementAndGet();
    }

    /** An object node from key/value pairs; values may be null, strings, numbers, booleans, maps, JsonNodes. */
    public static ObjectNode obj(Object... kv) {
        if (kv.length % 2 != 0) {
            throw new IllegalArgumentException("pairs expected");
        }
        ObjectNode node = JSON.createObjectNode();
        for (int i = 0; i < kv.length; i += 2) {
            node.set((String) kv[i], JSON.valueToTree(kv[i + 1]));
        }
        return node;
    }

    public static String rfc3339(Instant at) {
        return RFC3339_MILLIS.format(at);
    }

    // ------------------------------------------------------------------ raw HTTP

    /** One HTTP answer: status, headers, raw body and (when it parses) the JSON body. */
    public record Resp(int status, HttpHeaders headers, String body, JsonNode json) {
        public String error() {
            return json == null ? null : json.path("error").asText(null);
        }

        public JsonNode get(String field) {
            return json == null ? null : json.get(field);
        }

        public String text(String field) {
            JsonNode v = get(field);
            return v == null || v.isNull() ? null : v.asText();
        }

        public long num(String field) {
            JsonNode v = get(field);
            assertNotNull(v, "missing field " + field + " in " + body);
            assertTrue(v.isNumber(), field + " is not a number in " + body);
            return v.asLong();
        }

        public List<JsonNode> items() {
            JsonNode items = get("items");
            assertNotNull(items, "no items in " + body);
            assertTrue(items.isArray(), "items is not an array in " + body);
            List<JsonNode> out = new ArrayList<>();
            items.forEach(out::add);
            return out;
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    public Resp request(String method, String path, String token, byte[] body, Map<String, String> headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url() + path)).timeout(Duration.ofSeconds(20));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        headers.forEach(b::header);
        if (body != null) {
            if (!headers.containsKey("Content-Type")) {
                b.header("Content-Type", "application/json");
            }
            b.method(method, HttpRequest.BodyPublishers.ofByteArray(body));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return exchange(b.build());
    }

    private Resp exchange(HttpRequest request) {
        try {
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            JsonNode json = null;
            String text = r.body();
            if (text != null && !text.isBlank()) {
                try {
                    json = JSON.readTree(text);
                } catch (JsonProcessingException notJson) {
                    json = null;
                }
            }
            return new Resp(r.statusCode(), r.headers(), text, json);
        } catch (IOException e) {
            throw new AssertionError(request.method() + " " + request.uri() + " failed at the transport level: " + e,
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Sends {@code body} with {@code Transfer-Encoding: chunked} (no Content-Length). */
    public Resp requestChunked(String method, String path, String token, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url() + path)).timeout(Duration.ofSeconds(20))
                .header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(bytes)));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return exchange(b.build());
    }

    public Resp get(String token, String path) {
        return request("GET", path, token, null, Map.of());
    }

    public Resp delete(String token, String path) {
        return request("DELETE", path, token, null, Map.of());
    }

    public Resp post(String token, String path, Object body) {
        return request("POST", path, token, toBytes(body), Map.of());
    }

    public Resp put(String token, String path, Object body) {
        return request("PUT", path, token, toBytes(body), Map.of());
    }

    /** POST with a raw body string, sent as-is (for malformed JSON). */
    public Resp postRaw(String token, String path, String raw) {
        return request("POST", path, token, raw.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    private static byte[] toBytes(Object body) {
        if (body == null) {
            return new byte[0];
        }
        if (body instanceof String s) {
            return s.getBytes(StandardCharsets.UTF_8);
        }
        try {
            return JSON.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
    }

    // ------------------------------------------------------------------ assertions

    /** Asserts a contract error: the status, the code and a non-empty message. */
    public static Resp assertError(Resp r, int status, String code) {
        assertEquals(status, r.status(), () -> "expected " + status + " " + code + " but got " + r);
        assertNotNull(r.json(), () -> "error body is not JSON: " + r);
        assertEquals(code, r.error(), () -> "wrong error code: " + r);
        JsonNode msg = r.json().get("message");
        assertTrue(msg != null && msg.isTextual() && !msg.asText().isBlank(), () -> "error without message: " + r);
        return r;
    }

    public static Resp assertStatus(int status, Resp r) {
        assertEquals(status, r.status(), () -> "unexpected answer: " + r);
        return r;
    }

    // ------------------------------------------------------------------ domain helpers

    /** Admin creates a node; returns its token. */
    public String createNode(String id, String parentOrNull) {
        return createNodeResp(admin(), id, parentOrNull).text("token");
    }

    /** Creates a node with the given caller token; asserts 201 and returns the answer. */
    public Resp createNodeResp(String caller, String id, String parentOrNull) {
        Resp r = post(caller, "/v1/nodes", obj("id", id, "kind", "external", "parent", parentOrNull));
        assertEquals(201, r.status(), () -> "create node " + id + " failed: " + r);
        String token = r.text("token");
        assertNotNull(token, "no token in " + r);
        assertTrue(token.startsWith("pn_"), "node token must start with pn_: " + token);
        return r;
    }

    /** A node sends {@code text} to {@code to}; the raw answer. */
    public Resp send(String token, String to, String text) {
        return post(token, "/v1/messages", obj("to", to, "text", text));
    }

    /** A send that must be accepted; returns the 202 body. */
    public Resp sendOk(String token, String to, String text) {
        Resp r = send(token, to, text);
        assertEquals(202, r.status(), () -> "send to " + to + " not accepted: " + r);
        return r;
    }

    /** The caller's inbox as JSON, all pages. */
    public List<JsonNode> inbox(String token) {
        return inboxAll(token, "/v1/inbox");
    }

    /** Pages through an inbox endpoint with limit 1000 until no more items. */
    public List<JsonNode> inboxAll(String token, String base) {
        List<JsonNode> all = new ArrayList<>();
        long after = 0;
        while (true) {
            Resp r = get(token, base + "?after=" + after + "&limit=1000");
            assertEquals(200, r.status(), () -> "inbox read failed: " + r);
            List<JsonNode> items = r.items();
            if (items.isEmpty()) {
                return all;
            }
            all.addAll(items);
            long next = r.num("next");
            assertTrue(next > after, "next cursor did not advance: " + r.body());
            after = next;
        }
    }

    /** Message status as seen by {@code token}. */
    public Resp status(String token, String messageId) {
        return get(token, "/v1/messages/" + messageId);
    }

    /** Proves the hub still serves: a fresh self-send by a fresh root node is accepted. */
    public void assertStillServes() {
        String id = uid("alive");
        String token = createNode(id, null);
        Resp r = sendOk(token, id, "still alive?");
        assertEquals(1, r.num("seq"), "a fresh inbox starts at seq 1: " + r);
        assertFalse(inbox(token).isEmpty(), "the accepted send is not in the inbox");
    }

    /** Parses /metrics and sums all samples of {@code name} (any labels); NaN when absent. */
    public double metric(String name) {
        Resp r = get(admin(), "/metrics");
        assertEquals(200, r.status(), () -> "metrics failed: " + r);
        return metricValue(r.body(), name);
    }

    public static double metricValue(String text, String name) {
        double sum = 0;
        boolean found = false;
        for (String line : text.split("\n")) {
            if (line.startsWith("#")) {
                continue;
            }
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                // "name[{labels}] value [timestamp]": the value follows the name or the closing brace
                String rest = line.startsWith(name + "{") ? line.substring(line.lastIndexOf('}') + 1)
                        : line.substring(name.length());
                String value = rest.trim().split("\\s+")[0];
                sum += Double.parseDouble(value);
                found = true;
            }
        }
        return found ? sum : Double.NaN;
    }
}
