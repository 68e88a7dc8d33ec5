package dev.parley.core;

import java.util.Optional;

/**
 * Rules an operator writes around the built-in ACL (a policy file): deny rules refine it,
 * allow rules widen it. The rules in force can change at any time (a file reload); each
 * decision asks for {@link #current()} once and decides on that immutable rule set, so no
 * decision ever sees two versions.
 */
public interface PolicyRules {

    /** No rules: the built-in ACL alone, under {@link AccessPolicy#VERSION}. */
    PolicyRules NONE = () -> Ruleset.NONE;

    /** The rule set in force now. */
    Ruleset current();

    /** The version of the rule set in force now: what an audit entry that involves no access decision records. */
    default String version() {
        return current().version();
    }

    /** What a rule does when its condition holds. */
    enum Effect {
        ALLOW, DENY;

        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * A rule that matched. {@code error} is set when the rule could not be evaluated for this
     * input: a deny rule that fails counts as matching (fail closed), an allow rule does not.
     */
    record Match(String rule, Optional<String> error) {
    }

    /** One immutable, compiled rule set and its version. */
    interface Ruleset {
        /** No rules at all. */
        Ruleset NONE = new Ruleset() {
            @Override
            public String version() {
                return AccessPolicy.VERSION;
            }

            @Override
            public Optional<Match> first(Effect effect, RuleInput input) {
                return Optional.empty();
            }

            @Override
            public boolean isEmpty() {
                return true;
            }
        };

        /** The version recorded with every decision taken under this rule set. */
        String version();

        /** True when no rule can match, so that deciders need not gather a rule's input at all. */
        default boolean isEmpty() {
            return false;
        }

        /** The first rule of {@code effect}, in file order, that matches {@code input}. */
        Optional<Match> first(Effect effect, RuleInput input);
    }
}
