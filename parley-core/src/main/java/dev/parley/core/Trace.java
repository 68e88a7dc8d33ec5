package dev.parley.core;

import java.util.Optional;

/**
 * How an envelope travelled: the delivery attempt, the route that allowed it, the version
 * of the policy it was decided under, the policy rule that allowed it when a rule did, and
 * its place in a distributed trace.
 */
public record Trace(int attempt, Route route, String policyVersion, Optional<String> rule, TraceContext context) {

    /** A trace of a decision no policy rule took, for an envelope starting a trace of its own. */
    public Trace(int attempt, Route route, String policyVersion) {
        this(attempt, route, policyVersion, Optional.empty(), TraceContext.fresh());
    }

    /** A copy for delivery attempt {@code next}. */
    public Trace attempt(int next) {
        return new Trace(next, route, policyVersion, rule, context);
    }
}
