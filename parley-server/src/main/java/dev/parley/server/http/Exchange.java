package dev.parley.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Tokens;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.util.thread.Invocable;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
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
    private static final ByteBuffer NO_BODY = ByteBuffer.allocate(0);

    private final Request request;
    private final Response response;
    private final Tokens tokens;
    private final Supplier<Optional<Principal>> tokenless;
    private final long maxBodyBytes;
    private final Map<String, String> pathParameters;
    /** The caller as authenticated once for this request: the rate limit and the endpoint both ask. */
    private Optional<Principal> caller;
    private Fields query;
    /** Whether the body has been read to its end (or there is none): what is left is drained before the answer. */
    private volatile boolean bodyRead; // the transport's sweeper asks too
    /** The whole answer, written by the route guard once the endpoint returns and the body is drained. */
    private ByteBuffer answer;
    /** The open streamed answer, if the endpoint began one. */
    private ClientStream stream;
    /** What the endpoint left to run on a thread of its own once it returns ({@link #goOnAlone}). */
    private Routes.Endpoint rest;

    Exchange(Request request, Response response, Tokens tokens, Supplier<Optional<Principal>> tokenless,
             long maxBodyBytes, Map<String, String> pathParameters) {
        this.request = request;
        this.response = response;
        this.tokens = tokens;
        this.tokenless = tokenless;
        this.maxBodyBytes = maxBodyBytes;
        this.pathParameters = pathParameters;
    }

    /** The caller, from the bearer token (or, on a route that allows it, the caller of requests without one). */
    public Principal caller() {
        return optionalCaller().orElseThrow(() -> new ParleyException(ErrorCode.UNAUTHORIZED,
                request.getHeaders().contains(HttpHeader.AUTHORIZATION)
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
        String authorization = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        if (authorization == null) {
            return tokenless.get();
        }
        return authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())
                ? tokens.authenticate(authorization.substring(BEARER.length()).strip()) : Optional.empty();
    }

    public boolean fromLoopback() {
        return request.getConnectionMetaData().getRemoteSocketAddress() instanceof InetSocketAddress address
                && address.getAddress() != null && address.getAddress().isLoopbackAddress();
    }

    // --- admission and rate limits ---
    /** The request path, without the query. */
    String requestPath() {
        return Request.getPathInContext(request);
    }

    /** The client's address as the hub sees it (never a forwarded-for header, which a client could forge). */
    String clientAddress() {
        return Request.getRemoteAddr(request);
    }

    /** The connection the request came on, for the transport's ledger. */
    EndPoint endPoint() {
        return request.getConnectionMetaData().getConnection().getEndPoint();
    }

    public String path(String name) {
        return pathParameters.get(name);
    }

    public NodeId pathNode() {
        return NodeId.of(path("id"));
    }

    public Optional<String> query(String name) {
        if (request.getHttpURI().getQuery() == null) {
            return Optional.empty();
        }
        if (query == null) {
            try {
                query = Request.extractQueryParameters(request);
            } catch (RuntimeException e) { // an escape that is not UTF-8
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "the query string is not valid");
            }
        }
        return Optional.ofNullable(query.getValue(name));
    }

    public Optional<String> header(String name) {
        return Optional.ofNullable(request.getHeaders().get(name));
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
        long declared = declaredLength();
        if (declared > limit) {
            throw tooLarge(limit);
        }
        if (declared == 0) {
            bodyRead = true;
            return new byte[0];
        }
        try {
            InputStream in = Content.Source.asInputStream(request);
            if (declared > 0) {
                // the length is known and within the limit: one array of that size, no chunks to join
                byte[] bytes = new byte[(int) declared];
                if (in.readNBytes(bytes, 0, bytes.length) < bytes.length) {
                    throw Body.invalid("the body ended before its Content-Length");
                }
                bodyRead = true;
                return bytes;
            }
            byte[] bytes = in.readNBytes((int) limit + 1);
            if (bytes.length > limit) {
                throw tooLarge(limit);
            }
            bodyRead = true;
            return bytes;
        } catch (IOException e) { // the connection failed or was closed (the body timeout) while it was read
            throw new UncheckedIOException(new ClientGone(e));
        }
    }

    /** Whether the endpoint left some of the body unread. */
    boolean bodyLeft() {
        return !bodyRead && declaredLength() != 0;
    }

    /** The body's length as its headers say: 0 with neither a length nor a transfer coding (HTTP/1.1), -1 chunked. */
    private long declaredLength() {
        if (request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING)) {
            return -1;
        }
        long length = request.getLength();
        return Math.max(length, 0);
    }

    /**
     * Whether the client holds its body back until asked ({@code Expect: 100-continue}) and was
     * never asked: reading it now would ask.
     */
    boolean bodyHeldBack() {
        return !bodyRead && request.getHeaders().contains(HttpHeader.EXPECT, "100-continue");
    }

    /**
     * Reads and drops what is left of the body, up to {@code backstop} bytes; false when more
     * is left than that. Its reads end at the body timeout, when the transport closes the connection.
     */
    boolean drain(long backstop) {
        try (InputStream in = Content.Source.asInputStream(request)) {
            long skipped = in.skip(backstop + 1); // InputStream.skip reads until the end or the count
            while (skipped <= backstop && in.read() >= 0) {
                skipped++;
            }
            bodyRead = skipped <= backstop;
            return bodyRead;
        } catch (IOException e) {
            return false;
        }
    }

    public void json(int status, Object tree) {
        send(status, "application/json", Json.bytes(tree));
    }

    public void noContent() {
        empty(204);
    }

    /** Answers {@code status} without a body. */
    public void empty(int status) {
        response.setStatus(status);
        answer = NO_BODY;
    }

    /** Sets a header of the answer, before it is sent. */
    public void answerHeader(String name, String value) {
        response.getHeaders().put(name, value);
    }

    /** Whether the answer has begun: a stream that failed after its first write cannot answer again. */
    public boolean answered() {
        return answer != null || stream != null;
    }

    /**
     * Answers 200 with a body of {@code contentType} written as it is produced (an SSE stream, an
     * export). A client that is gone fails the stream's writes with an {@link IOException}
     * ({@link ClientGone}), whatever the server's own exception for it; a route that lets it
     * out has its connection closed without an answer, as nobody is left to read one. Each write
     * goes to the connection as it is made: a route that writes in small pieces buffers them.
     */
    public StreamBody stream(String contentType) {
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        stream = new ClientStream(response, endPoint());
        return stream;
    }

    /**
     * Runs {@code rest} on a virtual thread of its own once the endpoint returns, where the route
     * guard goes on as if the endpoint had run it (its refusals, its answer). For an answer that
     * waits long: an idle stream's parked thread then holds its own few frames, not the edge's
     * and the route's beneath them (a third of a parked stream's stack, stop 57).
     */
    public void goOnAlone(Routes.Endpoint rest) {
        this.rest = rest;
    }

    /** What {@link #goOnAlone} left, once: the guard takes it after the endpoint returned. */
    Routes.Endpoint takeRest() {
        Routes.Endpoint next = rest;
        rest = null;
        return next;
    }

    /** {@link #stream} of an SSE stream: its media type, and nothing of it kept by a cache. */
    public StreamBody eventStream() {
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
            response.getHeaders().put(HttpHeader.RETRY_AFTER, body.get("retryAfter").asText());
        }
        if (e.code() == ErrorCode.UNAUTHORIZED) {
            response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Bearer realm=\"parley\"");
        }
        json(e.code().status(), body);
    }

    /** Answers {@code status} with the whole body. */
    public void send(int status, String contentType, byte[] bytes) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        answer = ByteBuffer.wrap(bytes);
    }

    /**
     * Ends the exchange for the route guard: the whole answer is written (a stream's end), and
     * {@code done} completes when it is out.
     */
    void finish(Callback done) {
        if (stream != null) {
            stream.end(done);
        } else {
            response.write(true, answer, done);
        }
    }

    /** The answer closes the connection after it (the rest of the body cannot be told from a next request). */
    void closeAfterAnswer() {
        response.getHeaders().put(HttpHeader.CONNECTION, "close");
    }

    /** A response's body written as it is produced, whose failures for a client that is gone are {@link IOException}s. */
    private static final class ClientStream extends StreamBody {
        private final Response response;
        private final OutputStream out;
        private final EndPoint endPoint;
        private final long idleTimeout;
        private final Callback later = Callback.from(Invocable.InvocationType.NON_BLOCKING,
                () -> this.pending.written(), failure -> this.pending.failed(failure));
        /** The {@link #writeLater} under way; set before it starts, read when it ends. */
        private volatile Written pending;
        private volatile boolean aborted;
        private boolean closed;

        /**
         * A stream may idle between heartbeats for longer than the transport's idle timeout, and
         * its slow reader is the stream's watchdog's to cut: it has none while it is open.
         */
        ClientStream(Response response, EndPoint endPoint) {
            this.response = response;
            this.out = Content.Sink.asOutputStream(response);
            this.endPoint = endPoint;
            this.idleTimeout = endPoint.getIdleTimeout();
            endPoint.setIdleTimeout(0);
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                out.write(b, off, len);
            } catch (IOException e) {
                throw new ClientGone(e);
            }
        }

        /** Nothing is held here: each write is on its way when it returns (a flush would send an empty chunk). */
        @Override
        public void flush() {
        }

        @Override
        public void writeLater(ByteBuffer bytes, Written done) {
            pending = done;
            try {
                response.write(false, bytes, later);
            } catch (RuntimeException e) { // the answer has ended or failed
                done.failed(e);
            }
        }

        @Override
        public void abort() {
            aborted = true;
            endPoint.close(new IOException("the answer was given up without its end"));
        }

        @Override
        public void close() throws IOException {
            if (!closed && !aborted) {
                closed = true;
                try {
                    out.close();
                } catch (IOException e) {
                    throw new ClientGone(e);
                }
            }
        }

        void end(Callback done) {
            endPoint.setIdleTimeout(idleTimeout);
            if (aborted) {
                done.failed(new ClientGone(new IOException("a write to the client never finished")));
                return;
            }
            try {
                close();
                done.succeeded();
            } catch (IOException e) {
                done.failed(e);
            }
        }
    }

    /** A write to a client whose connection is gone. */
    static final class ClientGone extends IOException {
        ClientGone(IOException cause) {
            super("the client's connection is gone", cause);
        }
    }

    private static ParleyException tooLarge(long limit) {
        return new ParleyException(ErrorCode.PAYLOAD_TOO_LARGE, "the body is larger than the limit of "
                + limit + " bytes");
    }
}
