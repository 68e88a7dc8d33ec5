package dev.parley.core;

/** The outcome of asking whether a sender may reach a target. */
public sealed interface AclDecision {

    /** The send may go; {@code route} names the rule, {@code grantId} the grant when it was one. */
    record Allowed(Route route, String grantId) implements AclDecision {
    }

    /** The send is refused, with a reason a person can act on. */
    record Denied(String reason) implements AclDecision {
    }
}
