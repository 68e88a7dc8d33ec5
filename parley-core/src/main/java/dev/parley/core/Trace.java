package dev.parley.core;

import java.util.Optional;

/**
 * How an envelope travelled: the delivery attempt, the route that allowed it, the version
 * of the policy it was decided under, and the policy rule that allowed it when a rule did.
 */
public record Trace(int attempt, Route route, String policyVersion, Optional<String> rule) {

    /** A trace of a decision no policy rule took. */
    public Trace(int attempt, Route route, String policyVersion) {
        this(attempt, route, policyVersion, Optional.empty());
    }
}
