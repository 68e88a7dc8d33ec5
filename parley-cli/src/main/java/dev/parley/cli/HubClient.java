package dev.parley.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The hub's HTTP API as the commands need it: JSON in, JSON out, and every failure turned
 * into a {@link HubException}. All request code lives here so commands only say what to ask.
 *
 * <p>Requests go over the JDK's {@link HttpURLConnection}, not its {@code java.net.http}
 * client: a one-shot command makes one or two requests, and that client's start (the security
 * providers for an {@code SSLContext} it insists on even for {@code http://}, its selector
 * thread, its asynchronous stages) was a third of {@code parley send}'s wall time. The
 * connection is told what the other client did by default: no redirects, and no second
 * attempt at a POST (below); both use the JDK's default proxy selector.
 */
final class HubClient implements AutoCloseable {
    private static final String RESEND_POST = "sun.net.http.retryPost";

    static {
        // HttpURLConnection sends a POST again, unasked, when reading its answer fails (a reset,
        // a read timeout): a send must reach the hub once, whatever happens to its answer. This
        // JDK switch is read once, when its HTTP classes are first used, which is after this.
        // (Streaming the body would also stop the resend, but the JDK then drops the body of a
        // 401, and the hub's 401s say which proof failed.)
        if (System.getProperty(RESEND_POST) == null) {
            System.setProperty(RESEND_POST, "false");
        }
    }

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** Bounds the wait for each read of a plain call's answer; streams have no such bound (see {@link EventStream}). */
    private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(60);

    /** The hub's address without a trailing slash; paths start with one. */
    private final String base;
    private final URI hub;
    /** The Authorization header, or null for the routes that take none (the admission handshake). */
    private final String bearer;
    /** A W3C traceparent every request carries, or null. */
    private final String traceparent;
    /** Streams still open, shared with the {@link #traced} copies: {@link #close()} drops them. */
    private final Set<HttpURLConnection> streams;

    /**
     * A client acting as the holder of {@code token}; a null token sends no Authorization header.
     * Run under a span ({@code TRACEPARENT} set, as a turn's runner sets it), its requests continue it.
     */
    HubClient(URI hub, String token) {
        this(hub, token == null ? null : "Bearer " + token,
                dev.parley.core.TraceContext.parse(System.getenv(dev.parley.core.TraceContext.VARIABLE))
                .map(dev.parley.core.TraceContext::traceparent).orElse(null),
                ConcurrentHashMap.newKeySet());
    }

    private HubClient(URI hub, String bearer, String traceparent, Set<HttpURLConnection> streams) {
        String base = hub.toString();
        this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.hub = hub;
        this.bearer = bearer;
        this.traceparent = traceparent;
        this.streams = streams;
    }

    /** The same client, its requests carrying {@code traceparent}: what they send continues that trace. */
    HubClient traced(String traceparent) {
        return new HubClient(hub, bearer, traceparent, streams);
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
        return exchange("GET", path, null, Duration.ZERO);
    }

    JsonNode post(String path, JsonNode body) throws InterruptedException {
        return post(path, body, Duration.ZERO);
    }

    /**
     * Posts to a route that holds the call open for up to {@code hold} before answering
     * ({@code ?wait=}), so the answer is awaited that much longer than a plain call's.
     */
    JsonNode post(String path, JsonNode body, Duration hold) throws InterruptedException {
        return exchange("POST", path, body, hold);
    }

    /** Replaces a resource; the hub answers with its new state. */
    JsonNode put(String path, JsonNode body) throws InterruptedException {
        return exchange("PUT", path, body, Duration.ZERO);
    }

    /** Deletes; the hub answers 204, so the result is a JSON null. */
    JsonNode delete(String path) throws InterruptedException {
        return exchange("DELETE", path, null, Duration.ZERO);
    }

    /**
     * Opens a Server-Sent Events stream. {@code lastEventId} (may be null) is sent as
     * {@code Last-Event-ID} so the hub replays everything after it.
     */
    EventStream stream(String path, Long lastEventId) throws InterruptedException {
        HttpURLConnection connection = open("GET", path, "text/event-stream", Duration.ZERO);
        if (lastEventId != null) {
            connection.setRequestProperty("Last-Event-ID", Long.toString(lastEventId));
        }
        streams.add(connection);
        Runnable drop = () -> {
            streams.remove(connection);
            connection.disconnect();
        };
        try {
            int status = connection.getResponseCode();
            if (status != 200) {
                throw HubException.answered(status, text(connection, status));
            }
            return new EventStream(connection.getInputStream(), drop);
        } catch (IOException e) {
            drop.run();
            throw unreachable(e);
        } catch (RuntimeException e) {
            drop.run();
            throw e;
        }
    }

    /**
     * Reads a JSON Lines answer ({@code format=jsonl}) as it arrives, handing each non-blank
     * line to {@code each}; nothing is buffered, so an export of any size streams through.
     */
    void lines(String path, Consumer<String> each) throws InterruptedException {
        HttpURLConnection connection = open("GET", path, "application/x-ndjson", ANSWER_TIMEOUT);
        try {
            int status = connection.getResponseCode();
            if (status / 100 != 2) {
                throw HubException.answered(status, text(connection, status));
            }
            try (BufferedReader lines = new BufferedReader(
                    new InputStreamReader(connection.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                    if (!line.isBlank()) {
                        each.accept(line);
                    }
                }
            }
        } catch (IOException e) {
            throw unreachable(e);
        }
    }

    /** A connection for one request, not yet sent; {@code answer} bounds each read (zero: none). */
    private HttpURLConnection open(String method, String path, String accept, Duration answer)
            throws InterruptedException {
        try {
            HttpURLConnection connection = (HttpURLConnection) URI.create(base + path).toURL().openConnection();
            connection.setRequestMethod(method);
            connection.setInstanceFollowRedirects(false);
            connection.setUseCaches(false);
            connection.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
            connection.setReadTimeout((int) Math.min(answer.toMillis(), Integer.MAX_VALUE));
            connection.setRequestProperty("Accept", accept);
            if (traceparent != null) {
                connection.setRequestProperty("traceparent", traceparent);
            }
            if (bearer != null) {
                connection.setRequestProperty("Authorization", bearer);
            }
            return connection;
        } catch (IOException e) {
            throw unreachable(e);
        }
    }

    private JsonNode exchange(String method, String path, JsonNode body, Duration hold) throws InterruptedException {
        JsonTrees.prepareReading();
        HttpURLConnection connection = open(method, path, "application/json", ANSWER_TIMEOUT.plus(hold));
        String text;
        int status;
        try {
            if (body != null) {
                byte[] bytes = JsonTrees.bytes(body);
                connection.setRequestProperty("Content-Type", "application/json");
                connection.setDoOutput(true);
                try (OutputStream out = connection.getOutputStream()) {
                    out.write(bytes);
                }
            }
            status = connection.getResponseCode();
            text = text(connection, status);
        } catch (IOException e) {
            throw unreachable(e);
        }
        if (status / 100 != 2) {
            throw HubException.answered(status, text);
        }
        if (text.isBlank()) {
            return NullNode.getInstance();
        }
        try {
            return JsonTrees.read(text);
        } catch (JsonProcessingException e) {
            throw HubException.malformed("the hub answered " + status + " with non-JSON: "
                    + e.getOriginalMessage());
        }
    }

    /** The answer's body as text; empty when there is none (204). */
    private static String text(HttpURLConnection connection, int status) throws IOException {
        InputStream body = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
        if (body == null) {
            return "";
        }
        try (body) {
            return new String(body.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * A failed connection, or the interruption that closed it: a virtual thread interrupted in
     * a socket read sees its socket closed, and its caller asked to stop, not about the network.
     */
    private HubException unreachable(IOException e) throws InterruptedException {
        if (Thread.currentThread().isInterrupted()) {
            Thread.interrupted();
            throw new InterruptedException("interrupted while talking to the hub");
        }
        return HubException.unreachable(hub, e);
    }

    /** Drops any stream still open (an abandoned one) instead of waiting for it. */
    @Override
    public void close() {
        for (HttpURLConnection stream : streams) {
            streams.remove(stream);
            stream.disconnect();
        }
    }
}
