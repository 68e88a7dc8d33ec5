package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * Who performs one operation, which action it is and when: the source of the audit entries
 * that operation writes, so that all of them carry the same actor, action and time.
 */
record Actor(String name, String action, Instant at) {

    static Actor of(Principal caller, String action, Instant at) {
        return new Actor(caller.name(), action, at);
    }

    /** An allowance decided under a policy version, by a policy rule when {@code rule} is set. */
    AuditEntry allow(String target, String reason, Optional<String> envelopeId, String policyVersion,
                     Optional<String> rule) {
        return new AuditEntry(at, name, action, target, AuditEntry.Decision.ALLOW, reason, envelopeId, policyVersion, rule);
    }

    /** A refusal under a policy version that no policy rule decided. */
    AuditEntry deny(String target, String reason, String policyVersion) {
        return new AuditEntry(at, name, action, target, AuditEntry.Decision.DENY, reason, Optional.empty(), policyVersion);
    }

    /** The audit entry of an access decision that refused. */
    AuditEntry deny(String target, AclDecision.Denied denied) {
        return new AuditEntry(at, name, action, target, AuditEntry.Decision.DENY, denied.reason(), Optional.empty(),
                denied.policyVersion(), denied.rule());
    }
}
