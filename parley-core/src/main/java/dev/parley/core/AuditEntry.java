package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * One decision written to the audit log: who did what to whom, whether it was allowed,
 * why, under which policy version, and the policy rule that decided when one did.
 */
public record AuditEntry(Instant at, String actor, String action, String target, Decision decision, String reason,
                         Optional<String> envelopeId, String policyVersion, Optional<String> rule) {

    /** An entry no policy rule decided. */
    public AuditEntry(Instant at, String actor, String action, String target, Decision decision, String reason,
                      Optional<String> envelopeId, String policyVersion) {
        this(at, actor, action, target, decision, reason, envelopeId, policyVersion, Optional.empty());
    }

    /** The same entry with what it is about before its reason ({@code "schedule 0193…, occurrence …: " + reason}). */
    public AuditEntry about(String what) {
        return new AuditEntry(at, actor, action, target, decision, what + ": " + reason, envelopeId, policyVersion, rule);
    }

    public enum Decision {
        ALLOW, DENY;

        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
