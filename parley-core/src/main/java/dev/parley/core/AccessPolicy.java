package dev.parley.core;

import java.time.Instant;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Whether a sender may reach a target: the one decision every enforcement point takes
 * (sends, topic events, broadcasts, tasks, dry-run checks).
 * <ol>
 *   <li>Policy rules that deny: if one matches, the answer is no, whatever the ACL says.</li>
 *   <li>The built-in ACL, checked in a fixed order: self, intra-group (parent and child,
 *       siblings), an unexpired grant. Surfaces with a reach of their own (a topic grant,
 *       a broadcast's group) supply theirs in its place.</li>
 *   <li>Policy rules that allow: they reach beyond the ACL, with route {@link Route#POLICY}.</li>
 *   <li>Anything else is denied, with the ACL's reason.</li>
 * </ol>
 * Every decision carries the version of the rule set it was taken under.
 */
public final class AccessPolicy {
    /** The version of the built-in ACL alone, recorded when no policy rules are loaded. */
    public static final String VERSION = "builtin-acl-1";

    private final Graph graph;
    private final PolicyRules rules;

    /** The built-in ACL with no policy rules. */
    public AccessPolicy(Graph graph) {
        this(graph, PolicyRules.NONE);
    }

    public AccessPolicy(Graph graph, PolicyRules rules) {
        this.graph = graph;
        this.rules = rules;
    }

    /** The version of the rules in force now, for records that involve no decision (replies, notices). */
    public String version() {
        return rules.version();
    }

    /**
     * Decisions under the rules in force now and at {@code now}. One check serves one
     * operation, so that all its decisions (one per subscriber of a topic event, say) share
     * one policy version.
     */
    public Check check(Instant now) {
        return new Check(rules.current(), now);
    }

    /** A send of {@code envelope} from {@code sender} to {@code target}, under the rules in force now. */
    public AclDecision decide(Node sender, Node target, RuleInput.EnvelopeFacts envelope, Instant now) {
        return check(now).decide(sender, target, () -> envelope);
    }

    /** Decisions under one rule set at one instant. */
    public final class Check {
        private final PolicyRules.Ruleset ruleset;
        private final Instant now;

        private Check(PolicyRules.Ruleset ruleset, Instant now) {
            this.ruleset = ruleset;
            this.now = now;
        }

        public String policyVersion() {
            return ruleset.version();
        }

        /**
         * A node reaching a node: the rules around the built-in ACL. The envelope's facts are
         * gathered only if a rule is there to read them (its text's size takes a pass over it).
         */
        public AclDecision decide(Node sender, Node target, Supplier<RuleInput.EnvelopeFacts> envelope) {
            return decide(() -> RuleInput.Party.of(sender, graph), target, envelope, () -> acl(sender, target));
        }

        /**
         * The one decision function: rules that deny, then {@code builtIn} (the reach the
         * surface grants by itself), then rules that allow. {@code builtIn} is asked only when
         * no deny rule matched; its version and rule, if any, are replaced by this check's.
         */
        public AclDecision decide(RuleInput.Party sender, Node target, RuleInput.EnvelopeFacts envelope,
                                  Supplier<AclDecision> builtIn) {
            return decide(() -> sender, target, () -> envelope, builtIn);
        }

        private AclDecision decide(Supplier<RuleInput.Party> sender, Node target,
                                   Supplier<RuleInput.EnvelopeFacts> envelope,
                                   Supplier<AclDecision> builtIn) {
            if (ruleset.isEmpty()) { // the built-in ACL alone: no rule input to gather
                return stamped(builtIn.get());
            }
            RuleInput input = new RuleInput(sender.get(), RuleInput.Party.of(target, graph), envelope.get());
            Optional<PolicyRules.Match> deny = ruleset.first(PolicyRules.Effect.DENY, input);
            if (deny.isPresent()) {
                PolicyRules.Match match = deny.get();
                String reason = "policy rule " + match.rule() + " denies " + input.sender().id() + " reaching " + target.id()
                        + match.error().map(e -> " (the rule could not be evaluated: " + e + ")").orElse("");
                return new AclDecision.Denied(reason, Optional.of(match.rule()), ruleset.version());
            }
            return switch (stamped(builtIn.get())) {
                case AclDecision.Allowed allowed -> allowed;
                case AclDecision.Denied denied -> ruleset.first(PolicyRules.Effect.ALLOW, input)
                        .<AclDecision>map(m -> new AclDecision.Allowed(Route.POLICY, null, Optional.of(m.rule()),
                                ruleset.version()))
                        .orElse(denied);
            };
        }

        /** A decision of the surface's own reach, under this check's version and no rule. */
        private AclDecision stamped(AclDecision builtIn) {
            return switch (builtIn) {
                case AclDecision.Allowed a -> new AclDecision.Allowed(a.route(), a.grantId(), Optional.empty(),
                        ruleset.version());
                case AclDecision.Denied d -> new AclDecision.Denied(d.reason(), Optional.empty(), ruleset.version());
            };
        }

        /** The built-in ACL alone: self, intra-group, an unexpired grant. */
        public AclDecision acl(Node sender, Node target) {
            if (sender.id().equals(target.id())) {
                return allowed(Route.SELF, null);
            }
            if (sender.sharesGroupWith(target)) {
                return allowed(Route.INTRA_GROUP, null);
            }
            return graph.activeGrant(sender.id(), target.id(), now)
                    .map(g -> allowed(Route.GRANT, g.id()))
                    .orElseGet(() -> new AclDecision.Denied(
                            sender.id() + " and " + target.id() + " are in different groups and no active grant allows "
                                    + sender.id() + " to reach " + target.id(), Optional.empty(), ruleset.version()));
        }

        /** An allowance of the surface's own reach (a broadcast to a group, a topic grant). */
        public AclDecision allowed(Route route, String grantId) {
            return new AclDecision.Allowed(route, grantId, Optional.empty(), ruleset.version());
        }
    }
}
