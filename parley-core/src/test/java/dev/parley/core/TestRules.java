package dev.parley.core;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Policy rules of plain predicates, standing in for a compiled policy file. A predicate that
 * throws stands for a rule that cannot be evaluated for the input. The version comes from
 * {@code versions}, asked once per {@link #current()}, as a reloaded file would change it.
 */
final class TestRules implements PolicyRules {

    /** One rule: its name, what it does, and when it matches. */
    record Rule(String name, PolicyRules.Effect effect, Predicate<RuleInput> when) {
    }

    private final List<Rule> rules = new CopyOnWriteArrayList<>();
    private final Supplier<String> versions;

    TestRules(Supplier<String> versions) {
        this.versions = versions;
    }

    void add(Rule rule) {
        rules.add(rule);
    }

    @Override
    public Ruleset current() {
        String version = versions.get();
        List<Rule> snapshot = List.copyOf(rules);
        return new Ruleset() {
            @Override
            public String version() {
                return version;
            }

            @Override
            public Optional<Match> first(Effect effect, RuleInput input) {
                for (Rule rule : snapshot) {
                    if (rule.effect() != effect) {
                        continue;
                    }
                    try {
                        if (rule.when().test(input)) {
                            return Optional.of(new Match(rule.name(), Optional.empty()));
                        }
                    } catch (RuntimeException e) {
                        if (effect == Effect.DENY) {
                            return Optional.of(new Match(rule.name(), Optional.of(e.getMessage())));
                        }
                    }
                }
                return Optional.empty();
            }
        };
    }
}
