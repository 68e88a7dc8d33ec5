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

    AuditEntry allow(String target, String reason, Optional<String> envelopeId) {
        return new AuditEntry(at, name, action, target, AuditEntry.Decision.ALLOW, reason, envelopeId, AccessPolicy.VERSION);
    }

    AuditEntry deny(String target, String reason) {
        return new AuditEntry(at, name, action, target, AuditEntry.Decision.DENY, reason, Optional.empty(),
                AccessPolicy.VERSION);
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
}
