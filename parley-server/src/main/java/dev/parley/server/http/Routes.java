package dev.parley.server.http;

import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Tokens;
import dev.parley.core.TraceContext;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Method;
import io.helidon.http.ServerResponseHeaders;
import io.helidon.webserver.CloseConnectionException;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Collectors;

/**
 * The route table. Every endpoint runs inside the same guard, which turns refusals into
 * the contract's error bodies and anything unexpected into a logged 500 without a stack
 * trace for the client. A known path with another method answers 405, anything else 404.
 * A path holding an escaped slash ({@code %2F}) is refused with 400 whatever it matched:
 * the server routes the decoded path, so {@code /v1/nodes%2Fx} would otherwise reach
 * {@code /v1/nodes/x}, which a proxy filtering on the raw path would not expect. No id
 * contains a slash, so no request that means something is refused.
 */
public final class Routes {
    private static final Logger LOG = Logger.getLogger(Routes.class.getName());
    private static final io.helidon.http.HeaderName TRACEPARENT = HeaderNames.create("traceparent");

    /** One endpoint. */
    public interface Endpoint {
        void handle(Exchange exchange) throws Exception;
    }

    private final Tokens tokens;
    private final long maxBodyBytes;
    private final Connections connections;
    private final Map<String, Map<Method, Endpoint>> table = new LinkedHashMap<>();
    private final Map<String, Supplier<Optional<Principal>>> tokenless = new HashMap<>();

    public Routes(Tokens tokens, long maxBodyBytes, Connections connections) {
        this.tokens = tokens;
        this.maxBodyBytes = maxBodyBytes;
        this.connections = connections;
    }

    // --- rate limits: checked in the guard, before any endpoint ---
    private RequestLimiter limiter;

    /** Every request passes {@code requestLimiter} before its endpoint runs; set before {@link #install}. */
    public Routes limitWith(RequestLimiter requestLimiter) {
        this.limiter = requestLimiter;
        return this;
    }

    public Routes get(String path, Endpoint endpoint) {
        return on(Method.GET, path, endpoint);
    }

    public Routes post(String path, Endpoint endpoint) {
        return on(Method.POST, path, endpoint);
    }

    public Routes put(String path, Endpoint endpoint) {
        return on(Method.PUT, path, endpoint);
    }

    public Routes delete(String path, Endpoint endpoint) {
        return on(Method.DELETE, path, endpoint);
    }

    /**
     * Requests to {@code path} that carry no Authorization header at all act as whoever
     * {@code who} names, if anyone (conformance runs only). They are that caller everywhere,
     * the rate limit included.
     */
    public Routes tokenlessAs(String path, Supplier<Optional<Principal>> who) {
        tokenless.put(path, who);
        return this;
    }

    private Routes on(Method method, String path, Endpoint endpoint) {
        table.computeIfAbsent(path, p -> new LinkedHashMap<>()).put(method, endpoint);
        return this;
    }

    public void install(HttpRouting.Builder routing) {
        table.forEach((path, methods) -> {
            Supplier<Optional<Principal>> anonymous = tokenless.getOrDefault(path, Optional::empty);
            methods.forEach((method, endpoint) -> routing.route(method, path, guard(endpoint, anonymous)));
            String allow = methods.keySet().stream().map(Method::text).collect(Collectors.joining(", "));
            routing.any(path, guard(exchange -> {
                        exchange.answerHeader("Allow", allow);
                        throw new ParleyException(ErrorCode.METHOD_NOT_ALLOWED,
                                "this path answers " + allow + " only");
                    }, anonymous));
        });
        routing.any(guard(exchange -> {
            throw new ParleyException(ErrorCode.NOT_FOUND, "no such route");
        }, Optional::empty));
    }

    private Handler guard(Endpoint endpoint, Supplier<Optional<Principal>> tokenless) {
        return (request, response) -> {
            connections.running(request); // its body is now under the body timeout
            Exchange exchange = new Exchange(request, response, tokens, tokenless, maxBodyBytes);
            // the caller's W3C traceparent: what this request sends continues the caller's trace
            try (var traced = TraceContext.enter(TraceContext.parse(request.headers().value(TRACEPARENT).orElse(null)))) {
                refuseEscapedSlash(request.path().rawPath());
                if (limiter != null) {
                    limiter.admit(exchange); // rate limits
                }
                endpoint.handle(exchange);
            } catch (CloseConnectionException gone) {
                throw gone; // the socket failed or was closed: nobody is left to answer
            } catch (Exchange.ClientGone gone) {
                throw gone.connection(); // the same, met by a stream the route wrote
            } catch (ParleyException e) {
                if (!response.isSent()) {
                    exchange.error(e);
                }
            } catch (Exception e) {
                LOG.log(Level.SEVERE, "unexpected failure on " + request.prologue().method().text() + " "
                        + request.path().path(), e);
                if (!response.isSent()) {
                    exchange.error(new ParleyException(ErrorCode.INTERNAL, "internal error; the hub log has the details"));
                }
            }
            drain(request);
            connections.answered(request);
            closeIfAnswerSaysSo(response);
        };
    }

    private static void refuseEscapedSlash(String rawPath) {
        int escape = rawPath.indexOf('%');
        if (escape >= 0 && (rawPath.indexOf("%2F", escape) >= 0 || rawPath.indexOf("%2f", escape) >= 0)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST,
                    "a path may not hold an escaped slash (%2F): no id contains a slash");
        }
    }

    /**
     * Reads and drops what the endpoint left of the body (an early 401, 404, 413…), within the
     * body timeout and Helidon's size backstop, so that it is never read as the next request
     * (request smuggling), and a client still writing its body gets to read the answer. A body
     * that cannot be read to its end closes the connection.
     */
    private static void drain(ServerRequest request) {
        if (request.content().consumed()) {
            return;
        }
        if (!request.continueSent()) {
            // Expect: 100-continue, and the body was never asked for: the client holds it back.
            throw new CloseConnectionException("the request body was never asked for");
        }
        try {
            request.content().consume();
        } catch (RuntimeException e) {
            throw new CloseConnectionException("the rest of the request body could not be read", e);
        }
    }

    /**
     * Helidon 4.5 answers a request that says {@code Connection: close} with the same header,
     * then neither drains the body nor closes: it goes on reading requests from the socket.
     * Ending the connection here is what the header promises.
     */
    private static void closeIfAnswerSaysSo(ServerResponse response) {
        // the plain keep-alive most answers carry is settled without parsing the header's tokens
        ServerResponseHeaders headers = response.headers();
        if (response.isSent() && !headers.contains(HeaderValues.CONNECTION_KEEP_ALIVE)
                && headers.containsToken(HeaderValues.CONNECTION_CLOSE)) {
            throw new CloseConnectionException("the answer closed the connection");
        }
    }
}
