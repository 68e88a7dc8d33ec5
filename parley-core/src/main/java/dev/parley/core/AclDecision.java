package dev.parley.core;

import java.util.Optional;

/**
 * The outcome of asking whether a sender may reach a target, under one policy version.
 * {@code rule} names the policy rule that decided, when one did (a deny rule, or an allow
 * rule that reached beyond the ACL); a decision of the built-in ACL has none.
 */
public sealed interface AclDecision {

    Optional<String> rule();

    String policyVersion();

    /** The send may go; {@code route} names how, {@code grantId} the grant when it was one. */
    record Allowed(Route route, String grantId, Optional<String> rule, String policyVersion) implements AclDecision {

        /** The reason written to the audit log: the route, the grant, or the policy rule. */
        public String why() {
            if (rule.isPresent()) {
                return "policy rule " + rule.get();
            }
            return grantId == null ? route.wire() : "grant " + grantId;
        }
    }

    /** The send is refused, with a reason a person can act on. */
    record Denied(String reason, Optional<String> rule, String policyVersion) implements AclDecision {
    }
}
