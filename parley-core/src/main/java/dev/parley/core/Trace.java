package dev.parley.core;

/** How an envelope travelled: the delivery attempt, the rule that allowed it, the policy version. */
public record Trace(int attempt, Route route, String policyVersion) {
}
