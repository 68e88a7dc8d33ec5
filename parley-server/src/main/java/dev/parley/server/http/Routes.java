package dev.parley.server.http;

import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Tokens;
import dev.parley.core.TraceContext;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable;

import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The route table and the edge's one handler. A path is looked up whole, then against the
 * templates in the order they were added (a {@code {name}} segment matches one segment).
 * Every endpoint runs inside the same guard, which turns refusals into the contract's error
 * bodies and anything unexpected into a logged 500 without a stack trace for the client, and
 * writes the answer once the endpoint returns (or what it left to run alone ends: a stream, on
 * a virtual thread of its own). A known path with another method answers 405,
 * anything else 404. A path holding an escaped slash ({@code %2F}) is refused with 400 whatever
 * it matched: routes match the decoded path, so {@code /v1/nodes%2Fx} would otherwise reach
 * {@code /v1/nodes/x}, which a proxy filtering on the raw path would not expect. No id
 * contains a slash, so no request that means something is refused.
 */
public final class Routes extends Handler.Abstract {
    private static final Logger LOG = Logger.getLogger(Routes.class.getName());
    private static final Map<String, String> NO_PARAMETERS = Map.of();
    /** The threads of what endpoints left to run alone ({@link Exchange#goOnAlone}). */
    private static final ThreadFactory ALONE = Thread.ofVirtual().name("parley-stream-", 0).factory();

    /** One endpoint. */
    public interface Endpoint {
        void handle(Exchange exchange) throws Exception;
    }

    private final Tokens tokens;
    private final long maxBodyBytes;
    private final long drainBackstop;
    private final Connections connections;
    /** Paths without parameters, looked up whole; templates (a {@code {name}} segment) tried in order. */
    private final Map<String, Path> literal = new HashMap<>();
    private final List<Path> templates = new ArrayList<>();
    private final Map<String, Supplier<Optional<Principal>>> tokenless = new HashMap<>();

    /**
     * {@code drainBackstop}: the most of an unread body drained after an early answer before the
     * connection is closed instead.
     */
    public Routes(Tokens tokens, long maxBodyBytes, long drainBackstop, Connections connections) {
        this.tokens = tokens;
        this.maxBodyBytes = maxBodyBytes;
        this.drainBackstop = drainBackstop;
        this.connections = connections;
    }

    // --- rate limits: checked in the guard, before any endpoint ---
    private RequestLimiter limiter;

    /** Every request passes {@code requestLimiter} before its endpoint runs. */
    public Routes limitWith(RequestLimiter requestLimiter) {
        this.limiter = requestLimiter;
        return this;
    }

    public Routes get(String path, Endpoint endpoint) {
        return on("GET", path, endpoint);
    }

    public Routes post(String path, Endpoint endpoint) {
        return on("POST", path, endpoint);
    }

    public Routes put(String path, Endpoint endpoint) {
        return on("PUT", path, endpoint);
    }

    public Routes delete(String path, Endpoint endpoint) {
        return on("DELETE", path, endpoint);
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

    private Routes on(String method, String path, Endpoint endpoint) {
        Path known = literal.get(path);
        if (known == null) {
            known = templates.stream().filter(t -> t.template().equals(path)).findFirst().orElse(null);
        }
        if (known == null) {
            known = new Path(path);
            if (known.parameters()) {
                templates.add(known);
            } else {
                literal.put(path, known);
            }
        }
        known.methods().put(method, endpoint);
        return this;
    }

    /** A route's path: its segments, a {@code {name}} one matching any one segment, and its endpoints by method. */
    private record Path(String template, String[] segments, Map<String, Endpoint> methods) {
        Path(String template) {
            this(template, template.split("/", -1), new LinkedHashMap<>());
        }

        boolean parameters() {
            return template.contains("{");
        }

        /** The parameters of {@code path} if it matches, else null. */
        Map<String, String> match(String[] path) {
            if (path.length != segments.length) {
                return null;
            }
            Map<String, String> parameters = null;
            for (int i = 0; i < path.length; i++) {
                String segment = segments[i];
                if (segment.startsWith("{")) {
                    if (path[i].isEmpty()) {
                        return null;
                    }
                    if (parameters == null) {
                        parameters = new HashMap<>(4);
                    }
                    parameters.put(segment.substring(1, segment.length() - 1), path[i]);
                } else if (!segment.equals(path[i])) {
                    return null;
                }
            }
            return parameters;
        }

        String allow() {
            return String.join(", ", methods.keySet());
        }
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        Path route = literal.get(path);
        Map<String, String> parameters = NO_PARAMETERS;
        if (route == null) {
            String[] segments = path.split("/", -1);
            for (Path template : templates) {
                Map<String, String> matched = template.match(segments);
                if (matched != null) {
                    route = template;
                    parameters = matched;
                    break;
                }
            }
        }
        Endpoint endpoint;
        Supplier<Optional<Principal>> anonymous;
        if (route == null) {
            endpoint = exchange -> {
                throw new ParleyException(ErrorCode.NOT_FOUND, "no such route");
            };
            anonymous = Optional::empty;
        } else {
            endpoint = route.methods().get(request.getMethod());
            if (endpoint == null) {
                String allow = route.allow();
                endpoint = exchange -> {
                    exchange.answerHeader("Allow", allow);
                    throw new ParleyException(ErrorCode.METHOD_NOT_ALLOWED, "this path answers " + allow + " only");
                };
            }
            anonymous = tokenless.getOrDefault(route.template(), Optional::empty);
        }
        guard(new Exchange(request, response, tokens, anonymous, maxBodyBytes, parameters), endpoint, request,
                callback);
        return true;
    }

    private void guard(Exchange exchange, Endpoint endpoint, Request request, Callback callback) {
        connections.running(exchange); // its body is now under the body timeout
        run(exchange, ex -> {
            refuseEscapedSlash(request.getHttpURI().getPath());
            if (limiter != null) {
                limiter.admit(ex); // rate limits
            }
            endpoint.handle(ex);
        }, request, callback);
    }

    /**
     * Runs {@code endpoint} and answers; what it left to run alone ({@link Exchange#goOnAlone})
     * runs the same way on a virtual thread of its own, and this thread goes back to the edge.
     */
    private void run(Exchange exchange, Endpoint endpoint, Request request, Callback callback) {
        Endpoint rest = null;
        // the caller's W3C traceparent: what this request sends continues the caller's trace
        try (var traced = TraceContext.enter(TraceContext.parse(request.getHeaders().get("traceparent")))) {
            endpoint.handle(exchange);
            rest = exchange.takeRest();
        } catch (Exchange.ClientGone gone) {
            callback.failed(gone); // the socket failed or was closed: nobody is left to answer
            return;
        } catch (UncheckedIOException e) {
            if (e.getCause() instanceof Exchange.ClientGone gone) { // the same, met reading the body
                callback.failed(gone);
                return;
            }
            unexpected(exchange, request, e);
        } catch (ParleyException e) {
            if (!exchange.answered()) {
                exchange.error(e);
            }
        } catch (Exception e) {
            unexpected(exchange, request, e);
        }
        if (rest != null) {
            Endpoint alone = rest;
            ALONE.newThread(() -> run(exchange, alone, request, callback)).start();
            return;
        }
        if (!exchange.answered()) { // a route that returned without an answer is the hub's fault
            LOG.severe("no answer from the route of " + request.getMethod() + " " + Request.getPathInContext(request));
            exchange.error(new ParleyException(ErrorCode.INTERNAL, "internal error; the hub log has the details"));
        }
        drain(exchange);
        exchange.finish(Callback.from(Invocable.InvocationType.NON_BLOCKING, () -> {
            connections.answered(exchange);
            callback.succeeded();
        }, callback::failed));
    }

    private static void unexpected(Exchange exchange, Request request, Exception e) {
        LOG.log(Level.SEVERE, "unexpected failure on " + request.getMethod() + " " + Request.getPathInContext(request), e);
        if (!exchange.answered()) {
            exchange.error(new ParleyException(ErrorCode.INTERNAL, "internal error; the hub log has the details"));
        }
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
     * body timeout and a size backstop, before the answer, so that it is never read as the next
     * request (request smuggling). A body held back for {@code Expect: 100-continue} is not asked
     * for, and one larger than the backstop is not read: the answer closes the connection.
     */
    private void drain(Exchange exchange) {
        if (exchange.bodyLeft() && (exchange.bodyHeldBack() || !exchange.drain(drainBackstop))) {
            exchange.closeAfterAnswer();
        }
    }
}
