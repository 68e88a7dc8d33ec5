package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * One decision written to the audit log: who did what to whom, whether it was allowed,
 * why, and under which policy version.
 */
public record AuditEntry(Instant at, String actor, String action, String target, Decision decision, String reason,
                         Optional<String> envelopeId, String policyVersion) {

    public enum Decision {
        ALLOW, DENY;

        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
