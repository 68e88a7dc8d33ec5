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

    /** The audit entry of an access decision that allowed, with the envelope it let through. */
    AuditEntry allow(String target, AclDecision.Allowed allowed, Optional<String> envelopeId) {
        return allow(target, allowed.why(), envelopeId, allowed.policyVersion(), allowed.rule());
    }

    /** The node a caller acts as. The admin token has no node, hence no inbox to answer to. */
    static Node node(Graph graph, Principal caller, String what) {
        return switch (caller) {
            case Principal.Admin a -> throw new ParleyException(ErrorCode.FORBIDDEN,
                    "the admin token cannot " + what + "; use the token of a node");
            case Principal.Caller c -> graph.node(c.id()).orElseThrow(() -> new ParleyException(
                    ErrorCode.UNAUTHORIZED, "the node of this token no longer exists"));
        };
    }

    /** The refusal of a send the access policy denied; the detail names the rule and the version. */
    static ParleyException refusal(AclDecision.Denied denied) {
        java.util.Map<String, String> details = new java.util.LinkedHashMap<>();
        details.put("reason", denied.reason());
        denied.rule().ifPresent(r -> details.put("rule", r));
        details.put("policyVersion", denied.policyVersion());
        return new ParleyException(ErrorCode.ACL_DENIED, "acl denied: " + denied.reason(), details);
    }
}
