package dev.parley.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.StringJoiner;
import java.util.function.Consumer;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;

/**
 * The hub's HTTP API as the commands need it: JSON in, JSON out, and every failure turned
 * into a {@link HubException}. All request code lives here so commands only say what to ask.
 */
final class HubClient implements AutoCloseable {
    /** The one mapper of the CLI; plain trees, so output keeps the hub's field order. */
    static final ObjectMapper JSON = new ObjectMapper();

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** Bounds a plain request-response call; streams have no such bound (see {@link EventStream}). */
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(60);

    private final URI hub;
    /** The Authorization header, or null for the routes that take none (the admission handshake). */
    private final String bearer;
    private final HttpClient http;
    /** A W3C traceparent every request carries, or null. */
    private final String traceparent;

    /**
     * A client acting as the holder of {@code token}; a null token sends no Authorization header.
     * Run under a span ({@code TRACEPARENT} set, as a turn's runner sets it), its requests continue it.
     */
    HubClient(URI hub, String token) {
        this(hub, token == null ? null : "Bearer " + token, http(hub),
                dev.parley.core.TraceContext.parse(System.getenv(dev.parley.core.TraceContext.VARIABLE))
                .map(dev.parley.core.TraceContext::traceparent).orElse(null));
    }

    /**
     * The HTTP client for {@code hub}. HTTP/1.1 explicitly: the hub speaks it, and this avoids
     * the h2c upgrade dance. A plain {@code http://} hub needs no TLS: given no context of its
     * own, the client would load the JDK's default one (parsing its CA certificates), a good
     * share of a one-shot command's start.
     */
    private static HttpClient http(URI hub) {
        HttpClient.Builder http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT);
        if ("http".equals(hub.getScheme())) {
            try {
                SSLContext none = SSLContext.getInstance("TLS");
                none.init(new KeyManager[0], new TrustManager[0], null);
                http.sslContext(none);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("TLS is not available in this JDK", e);
            }
        }
        return http.build();
    }

    private HubClient(URI hub, String bearer, HttpClient http, String traceparent) {
        this.hub = hub;
        this.bearer = bearer;
        this.http = http;
        this.traceparent = traceparent;
    }

    /** The same client, its requests carrying {@code traceparent}: what they send continues that trace. */
    HubClient traced(String traceparent) {
        return new HubClient(hub, bearer, http, traceparent);
    }

    /** Encodes one path segment, e.g. a node id taken from the command line. */
    static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * {@code path} with a query string of the given name/value pairs, values encoded; pairs
     * whose value is null are left out, so optional filters can be passed as they are.
     */
    static String query(String path, Object... namesAndValues) {
        StringJoiner query = new StringJoiner("&", "?", "").setEmptyValue("");
        for (int i = 0; i + 1 < namesAndValues.length; i += 2) {
            if (namesAndValues[i + 1] != null) {
                query.add(namesAndValues[i] + "=" + segment(namesAndValues[i + 1].toString()));
            }
        }
        return path + query;
    }

    JsonNode get(String path) throws InterruptedException {
        return exchange(request(path).GET(), Duration.ZERO);
    }

    JsonNode post(String path, JsonNode body) throws InterruptedException {
        return post(path, body, Duration.ZERO);
    }

    /**
     * Posts to a route that holds the call open for up to {@code hold} before answering
     * ({@code ?wait=}), so the answer is awaited that much longer than a plain call's.
     */
    JsonNode post(String path, JsonNode body, Duration hold) throws InterruptedException {
        return exchange(request(path, "POST", body), hold);
    }

    /** Replaces a resource; the hub answers with its new state. */
    JsonNode put(String path, JsonNode body) throws InterruptedException {
        return exchange(request(path, "PUT", body), Duration.ZERO);
    }

    /** Deletes; the hub answers 204, so the result is a JSON null. */
    JsonNode delete(String path) throws InterruptedException {
        return exchange(request(path).DELETE(), Duration.ZERO);
    }

    /**
     * Opens a Server-Sent Events stream. {@code lastEventId} (may be null) is sent as
     * {@code Last-Event-ID} so the hub replays everything after it.
     */
    EventStream stream(String path, Long lastEventId) throws InterruptedException {
        HttpRequest.Builder request = request(path).setHeader("Accept", "text/event-stream").GET();
        if (lastEventId != null) {
            request.header("Last-Event-ID", Long.toString(lastEventId));
        }
        HttpResponse<InputStream> response = send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        if (response.statusCode() != 200) {
            String body;
            try (InputStream in = response.body()) {
                body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                body = "";
            }
            throw HubException.answered(response.statusCode(), body);
        }
        return new EventStream(response.body());
    }

    /**
     * Reads a JSON Lines answer ({@code format=jsonl}) as it arrives, handing each non-blank
     * line to {@code each}; nothing is buffered, so an export of any size streams through.
     */
    void lines(String path, Consumer<String> each) throws InterruptedException {
        HttpRequest request = request(path).setHeader("Accept", "application/x-ndjson").GET()
                .timeout(ANSWER_TIMEOUT).build();
        HttpResponse<InputStream> response = send(request, HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            if (response.statusCode() / 100 != 2) {
                StringBuilder body = new StringBuilder();
                lines.lines().forEach(body::append);
                throw HubException.answered(response.statusCode(), body.toString());
            }
            for (String line; (line = lines.readLine()) != null; ) {
                if (!line.isBlank()) {
                    each.accept(line);
                }
            }
        } catch (IOException e) {
            throw HubException.unreachable(hub, e);
        }
    }

    private HttpRequest.Builder request(String path) {
        String base = hub.toString();
        if (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .header("Accept", "application/json");
        if (traceparent != null) {
            request.header("traceparent", traceparent);
        }
        return bearer == null ? request : request.header("Authorization", bearer);
    }

    /** A request carrying {@code body} as JSON. */
    private HttpRequest.Builder request(String path, String method, JsonNode body) {
        return request(path)
                .header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(body.toString(), StandardCharsets.UTF_8));
    }

    private JsonNode exchange(HttpRequest.Builder request, Duration hold) throws InterruptedException {
        HttpResponse<String> response = send(request.timeout(ANSWER_TIMEOUT.plus(hold)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        String body = response.body();
        if (response.statusCode() / 100 != 2) {
            throw HubException.answered(response.statusCode(), body);
        }
        if (body == null || body.isBlank()) {
            return NullNode.getInstance();
        }
        try {
            return JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw HubException.malformed("the hub answered " + response.statusCode() + " with non-JSON: "
                    + e.getOriginalMessage());
        }
    }

    private <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws InterruptedException {
        try {
            return http.send(request, handler);
        } catch (IOException e) {
            throw HubException.unreachable(hub, e);
        }
    }

    /** Drops any connection still open (an abandoned stream) instead of waiting for it. */
    @Override
    public void close() {
        http.shutdownNow();
    }
}
