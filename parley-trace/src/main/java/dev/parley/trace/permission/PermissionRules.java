package dev.parley.trace.permission;

import dev.parley.trace.TraceEvent;

import java.util.Optional;

/** An operator's rules over permission requests (the policy file's {@code permissions}). */
public interface PermissionRules {
    /** No rules: no opinion on anything. */
    PermissionRules NONE = ask -> Optional.empty();

    /** A rule that held, and what it says. */
    record Ruling(String rule, TraceEvent.Verdict verdict) {
    }

    /** The rule that decides {@code ask}, if any holds; none is no opinion. */
    Optional<Ruling> rule(PermissionAsk ask);
}
