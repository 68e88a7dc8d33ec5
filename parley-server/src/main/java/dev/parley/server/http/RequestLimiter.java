package dev.parley.server.http;

import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Rate;
import dev.parley.core.RateLimits;
import dev.parley.server.metrics.Metrics;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The rate check every request passes before its endpoint runs (installed in {@link Routes},
 * so no route can skip it). The admin is never limited. Requests to the admission routes
 * ({@code /v1/auth/*}) take from a bucket of their client address, one per route
 * (default 30 a minute); every other request made with a node's token takes from that
 * node's bucket (default 200/s, burst 400, or the node's override). Over the rate: 429
 * {@code rate_limited} with {@code Retry-After} in whole seconds (at least 1).
 */
public final class RequestLimiter {
    static final String ADMISSION_PREFIX = "/v1/auth/";

    private final RateLimits limits;
    private final Rate perAddress;
    private final Metrics metrics;

    public RequestLimiter(RateLimits limits, Rate perAddress, Metrics metrics) {
        this.limits = limits;
        this.perAddress = perAddress;
        this.metrics = metrics;
    }

    void admit(Exchange exchange) {
        Optional<Principal> caller = exchange.optionalCaller();
        if (caller.isPresent() && caller.get() instanceof Principal.Admin) {
            return;
        }
        String path = exchange.requestPath();
        Optional<Duration> wait;
        String scope;
        if (path.startsWith(ADMISSION_PREFIX)) {
            scope = "address";
            wait = limits.takeForKey(exchange.clientAddress() + " " + family(path), perAddress);
        } else if (caller.isPresent() && caller.get() instanceof Principal.Caller node) {
            scope = "node";
            wait = limits.takeForNode(node.id());
        } else {
            return;
        }
        if (wait.isPresent()) {
            metrics.rateLimited(scope);
            if (path.equals("/v1/auth/exchange")) {
                metrics.exchange(ErrorCode.RATE_LIMITED.wire());
            } else if (path.equals("/v1/auth/redeem")) {
                metrics.redeem(ErrorCode.RATE_LIMITED.wire());
            }
            throw overRate(scope, wait.get());
        }
    }

    /** Envelopes of one request past its first (a batch) that the caller's bucket let in, and what the rest are told. */
    public record Admitted(int count, Optional<ParleyException> refusal) {
    }

    /**
     * Takes one more token per envelope of a batch past its first (whose token the request
     * took in {@link #admit}), in order, until the caller's bucket is empty: a batch of N
     * costs N tokens. The envelopes past {@code count} are over the rate. The admin is never
     * limited.
     */
    public Admitted admitMore(Principal caller, int more) {
        if (!(caller instanceof Principal.Caller node)) {
            return new Admitted(more, Optional.empty());
        }
        for (int taken = 0; taken < more; taken++) {
            Optional<Duration> wait = limits.takeForNode(node.id());
            if (wait.isPresent()) {
                metrics.rateLimited("node");
                return new Admitted(taken, Optional.of(overRate("node", wait.get())));
            }
        }
        return new Admitted(more, Optional.empty());
    }

    private static ParleyException overRate(String scope, Duration wait) {
        long seconds = Math.max(1, (wait.toNanos() + 999_999_999L) / 1_000_000_000L);
        return new ParleyException(ErrorCode.RATE_LIMITED, "node".equals(scope)
                ? "this node is over its rate limit; retry in " + seconds + " s"
                : "too many admission requests from this address; retry in " + seconds + " s",
                Map.of("retryAfter", Long.toString(seconds)));
    }

    /** One bucket per admission route, not per path: unknown paths share one, so they cannot multiply buckets. */
    private static String family(String path) {
        return switch (path) {
            case "/v1/auth/exchange", "/v1/auth/redeem", "/v1/auth/gateway" -> path;
            default -> ADMISSION_PREFIX + "*";
        };
    }
}
