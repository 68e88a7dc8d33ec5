package dev.parley.server;

import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Tokens;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.webserver.http.Handler;
import io.helidon.webserver.http.HttpRouting;

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
 */
final class Routes {
    private static final Logger LOG = Logger.getLogger(Routes.class.getName());

    /** One endpoint. */
    interface Endpoint {
        void handle(Exchange exchange) throws Exception;
    }

    private final Tokens tokens;
    private final long maxBodyBytes;
    private final Map<String, Map<Method, Endpoint>> table = new LinkedHashMap<>();
    private final Map<String, Supplier<Optional<Principal>>> tokenless = new HashMap<>();

    Routes(Tokens tokens, long maxBodyBytes) {
        this.tokens = tokens;
        this.maxBodyBytes = maxBodyBytes;
    }

    // --- rate limits: checked in the guard, before any endpoint ---
    private RequestLimiter limiter;

    /** Every request passes {@code requestLimiter} before its endpoint runs; set before {@link #install}. */
    Routes limitWith(RequestLimiter requestLimiter) {
        this.limiter = requestLimiter;
        return this;
    }

    Routes get(String path, Endpoint endpoint) {
        return on(Method.GET, path, endpoint);
    }

    Routes post(String path, Endpoint endpoint) {
        return on(Method.POST, path, endpoint);
    }

    Routes put(String path, Endpoint endpoint) {
        return on(Method.PUT, path, endpoint);
    }

    Routes delete(String path, Endpoint endpoint) {
        return on(Method.DELETE, path, endpoint);
    }

    /**
     * Requests to {@code path} that carry no Authorization header at all act as whoever
     * {@code who} names, if anyone (conformance runs only). They are that caller everywhere,
     * the rate limit included.
     */
    Routes tokenlessAs(String path, Supplier<Optional<Principal>> who) {
        tokenless.put(path, who);
        return this;
    }

    private Routes on(Method method, String path, Endpoint endpoint) {
        table.computeIfAbsent(path, p -> new LinkedHashMap<>()).put(method, endpoint);
        return this;
    }

    void install(HttpRouting.Builder routing) {
        table.forEach((path, methods) -> {
            Supplier<Optional<Principal>> anonymous = tokenless.getOrDefault(path, Optional::empty);
            methods.forEach((method, endpoint) -> routing.route(method, path, guard(endpoint, anonymous)));
            String allow = methods.keySet().stream().map(Method::text).collect(Collectors.joining(", "));
            routing.any(path, guard(exchange -> {
                        exchange.response().header(HeaderNames.ALLOW, allow);
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
            Exchange exchange = new Exchange(request, response, tokens, tokenless, maxBodyBytes);
            try {
                if (limiter != null) {
                    limiter.admit(exchange); // rate limits
                }
                endpoint.handle(exchange);
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
        };
    }
}
