package dev.parley.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Tokens;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.ServerConnectionException;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;

/**
 * One HTTP request and its response, with the reading and answering every route shares:
 * the caller from the bearer token, a size-limited body, typed query parameters, JSON
 * answers and error bodies. Routes reach the HTTP server only through it (and the server's
 * types stay in this package and {@code Hub}), so that the edge can change under them
 * (docs/idle-streams-edge.md).
 */
public final class Exchange {
    private static final String BEARER = "Bearer ";
    /** The media type of the hub's SSE streams. */
    public static final String EVENT_STREAM = "text/event-stream; charset=utf-8";

    private final ServerRequest request;
    private final ServerResponse response;
    private final Tokens tokens;
    private final Supplier<Optional<Principal>> tokenless;
    private final long maxBodyBytes;
    /** The caller as authenticated once for this request: the rate limit and the endpoint both ask. */
    private Optional<Principal> caller;

    Exchange(ServerRequest request, ServerResponse response, Tokens tokens, Supplier<Optional<Principal>> tokenless,
             long maxBodyBytes) {
        this.request = request;
        this.response = response;
        this.tokens = tokens;
        this.tokenless = tokenless;
        this.maxBodyBytes = maxBodyBytes;
    }

    /** The caller, from the bearer token (or, on a route that allows it, the caller of requests without one). */
    public Principal caller() {
        return optionalCaller().orElseThrow(() -> new ParleyException(ErrorCode.UNAUTHORIZED,
                request.headers().contains(HeaderNames.AUTHORIZATION)
                        ? "the bearer token is not valid (unknown, rotated or of a deleted node)"
                        : "missing Authorization: Bearer <token>"));
    }

    public Optional<Principal> optionalCaller() {
        if (caller == null) {
            caller = authenticate();
        }
        return caller;
    }

    /**
     * Who the request's credentials stand for at this moment, not when it began: a long-lived
     * stream asks again to end when its token is rotated or its node deleted.
     */
    public Optional<Principal> authenticate() {
        Optional<String> authorization = request.headers().first(HeaderNames.AUTHORIZATION);
        if (authorization.isEmpty()) {
            return tokenless.get();
        }
        return authorization.filter(h -> h.regionMatches(true, 0, BEARER, 0, BEARER.length()))
                .flatMap(h -> tokens.authenticate(h.substring(BEARER.length()).strip()));
    }

    public boolean fromLoopback() {
        return request.remotePeer().address() instanceof InetSocketAddress address
                && address.getAddress() != null && address.getAddress().isLoopbackAddress();
    }

    // --- admission and rate limits ---
    /** The request path, without the query. */
    String requestPath() {
        return request.path().path();
    }

    /** The client's address as the hub sees it (never a forwarded-for header, which a client could forge). */
    String clientAddress() {
        return request.remotePeer().address() instanceof InetSocketAddress address && address.getAddress() != null
                ? address.getAddress().getHostAddress() : String.valueOf(request.remotePeer().address());
    }

    public String path(String name) {
        return request.path().pathParameters().get(name);
    }

    public NodeId pathNode() {
        return NodeId.of(path("id"));
    }

    public Optional<String> query(String name) {
        // contains() first: Helidon's first() on a request without that parameter looks up its
        // global mapper registry on every call, a measurable share of a send
        var query = request.query();
        return query.contains(name) ? query.first(name).asOptional() : Optional.empty();
    }

    public Optional<String> header(String name) {
        return request.headers().first(HeaderNames.create(name));
    }

    /** An integer query parameter within bounds, or {@code code} naming what is wrong. */
    public OptionalLong longQuery(String name, long min, long max, ErrorCode code) {
        Optional<String> raw = query(name);
        return raw.isEmpty() ? OptionalLong.empty() : OptionalLong.of(parseLong(name, raw.get(), min, max, code));
    }

    public static long parseLong(String name, String raw, long min, long max, ErrorCode code) {
        try {
            long value = Long.parseLong(raw.strip());
            if (value < min || value > max) {
                throw new ParleyException(code, name + " must be between " + min + " and " + max);
            }
            return value;
        } catch (NumberFormatException e) {
            throw new ParleyException(code, name + " must be an integer");
        }
    }

    /** The request body as a JSON object; refuses bodies over the limit before reading them whole. */
    public Body body() {
        return Body.parse(rawBody());
    }

    /** The request body as sent (empty when there is none); refuses bodies over the limit before reading them whole. */
    public byte[] rawBody() {
        return rawBody(maxBodyBytes);
    }

    /** The hub's limit on a request body, and on any one message within a batch. */
    public long maxBodyBytes() {
        return maxBodyBytes;
    }

    /** The request body as a JSON object, up to {@code limit} bytes (a batch's limit, not one message's). */
    public Body body(long limit) {
        return Body.parse(rawBody(limit));
    }

    private byte[] rawBody(long limit) {
        OptionalLong declared = request.headers().contentLength();
        if (declared.orElse(0) > limit) {
            throw tooLarge(limit);
        }
        if (!request.content().hasEntity()) {
            return new byte[0];
        }
        try (InputStream in = request.content().inputStream()) {
            if (declared.isPresent() && declared.getAsLong() >= 0) {
                // the length is known and within the limit: one array of that size, no chunks to join
                byte[] bytes = new byte[(int) declared.getAsLong()];
                if (in.readNBytes(bytes, 0, bytes.length) < bytes.length) {
                    throw Body.invalid("the body ended before its Content-Length");
                }
                return bytes;
            }
            byte[] bytes = in.readNBytes((int) limit + 1);
            if (bytes.length > limit) {
                throw tooLarge(limit);
            }
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The request itself, for adapters that read more than the JSON routes do. */
    ServerRequest request() {
        return request;
    }

    public void json(int status, Object tree) {
        send(status, "application/json", Json.bytes(tree));
    }

    public void noContent() {
        empty(204);
    }

    /** Answers {@code status} without a body. */
    public void empty(int status) {
        response.status(Status.create(status)).send();
    }

    /** Sets a header of the answer, before it is sent. */
    public void answerHeader(String name, String value) {
        response.header(HeaderNames.create(name), value);
    }

    /** Whether the answer has begun: a stream that failed after its first write cannot answer again. */
    public boolean answered() {
        return response.isSent();
    }

    /**
     * Answers 200 with a body of {@code contentType} written as it is produced (an SSE stream, an
     * export). A client that is gone fails the stream's writes with an {@link IOException}
     * ({@link ClientGone}), whatever the server's own exception for it; a route that lets it
     * out has its connection closed without an answer, as nobody is left to read one.
     */
    public OutputStream stream(String contentType) {
        response.status(Status.OK_200);
        response.header(HeaderNames.CONTENT_TYPE, contentType);
        return new ClientStream(response.outputStream());
    }

    /** {@link #stream} of an SSE stream: its media type, and nothing of it kept by a cache. */
    public OutputStream eventStream() {
        answerHeader("Cache-Control", "no-cache");
        return stream(EVENT_STREAM);
    }

    public void text(String contentType, String body) {
        send(200, contentType, body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    void error(ParleyException e) {
        ObjectNode body = Views.error(e);
        // --- rate limits: the wait as Retry-After in whole seconds too ---
        if (body.path("retryAfter").isNumber()) {
            response.header(HeaderNames.RETRY_AFTER, body.get("retryAfter").asText());
        }
        if (e.code() == ErrorCode.UNAUTHORIZED) {
            response.header(HeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"parley\"");
        }
        json(e.code().status(), body);
    }

    /** Answers {@code status} with the whole body. */
    public void send(int status, String contentType, byte[] bytes) {
        response.status(Status.create(status));
        response.header(HeaderNames.CONTENT_TYPE, contentType);
        response.send(bytes);
    }

    /** A response's output stream whose failures for a client that is gone are {@link IOException}s. */
    private static final class ClientStream extends OutputStream {
        private final OutputStream out;

        ClientStream(OutputStream out) {
            this.out = out;
        }

        @Override
        public void write(int b) throws IOException {
            guarded(() -> out.write(b));
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            guarded(() -> out.write(b, off, len));
        }

        @Override
        public void flush() throws IOException {
            guarded(out::flush);
        }

        @Override
        public void close() throws IOException {
            guarded(out::close);
        }

        private interface Write {
            void run() throws IOException;
        }

        private static void guarded(Write write) throws IOException {
            try {
                write.run();
            } catch (ServerConnectionException e) {
                throw new ClientGone(e);
            }
        }
    }

    /** A write to a client whose connection is gone. */
    static final class ClientGone extends IOException {
        ClientGone(ServerConnectionException connection) {
            super("the client's connection is gone", connection);
        }

        /** The server's own word for it, which closes the connection when a handler throws it. */
        ServerConnectionException connection() {
            return (ServerConnectionException) getCause();
        }
    }

    private static ParleyException tooLarge(long limit) {
        return new ParleyException(ErrorCode.PAYLOAD_TOO_LARGE, "the body is larger than the limit of "
                + limit + " bytes");
    }
}
