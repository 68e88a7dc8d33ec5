package dev.parley.server.policy;

import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.parley.core.PolicyRules;
import dev.parley.core.RuleInput;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A compiled, immutable rule set: CEL programs in file order, under one version. Programs
 * are thread-safe, so one rule set serves every request until a reload replaces it whole.
 * {@link #observed(Observer)} gives the same rules reporting what they decide (for metrics).
 */
final class CelRuleset implements PolicyRules.Ruleset {

    /** One rule, compiled. */
    record CompiledRule(String name, PolicyRules.Effect effect, CelRuntime.Program program) {
    }

    /** Hears of each rule that decided (a match is always decisive where it is asked for) and each that failed. */
    interface Observer {
        Observer NONE = new Observer() {
            @Override
            public void matched(PolicyRules.Effect effect, String rule) {
            }

            @Override
            public void failed(String rule) {
            }
        };

        void matched(PolicyRules.Effect effect, String rule);

        void failed(String rule);
    }

    private final String version;
    private final List<CompiledRule> rules;
    private final Observer observer;

    CelRuleset(String version, List<CompiledRule> rules) {
        this(version, rules, Observer.NONE);
    }

    private CelRuleset(String version, List<CompiledRule> rules, Observer observer) {
        this.version = version;
        this.rules = List.copyOf(rules);
        this.observer = observer;
    }

    CelRuleset observed(Observer newObserver) {
        return new CelRuleset(version, rules, newObserver);
    }

    @Override
    public String version() {
        return version;
    }

    @Override
    public boolean isEmpty() {
        return rules.isEmpty();
    }

    /**
     * The first rule of {@code effect} that holds. A rule that cannot be evaluated for this
     * input (a missing map key, say) matches when it denies (fail closed) and is passed over
     * when it allows.
     */
    @Override
    public Optional<PolicyRules.Match> first(PolicyRules.Effect effect, RuleInput input) {
        return first(effect, () -> variables(input));
    }

    /** As {@link #first(PolicyRules.Effect, RuleInput)}, over the variables a rule set's environment declares. */
    Optional<PolicyRules.Match> first(PolicyRules.Effect effect, Supplier<Map<String, Object>> input) {
        Map<String, Object> variables = null;
        for (CompiledRule rule : rules) {
            if (rule.effect() != effect) {
                continue;
            }
            if (variables == null) {
                variables = input.get();
            }
            Optional<String> error;
            try {
                if (!Boolean.TRUE.equals(rule.program().eval(variables))) {
                    continue;
                }
                error = Optional.empty();
            } catch (CelEvaluationException | RuntimeException e) {
                observer.failed(rule.name());
                if (effect != PolicyRules.Effect.DENY) {
                    continue;
                }
                error = Optional.of(String.valueOf(e.getMessage()));
            }
            observer.matched(effect, rule.name());
            return Optional.of(new PolicyRules.Match(rule.name(), error));
        }
        return Optional.empty();
    }

    private static Map<String, Object> variables(RuleInput input) {
        return Map.of("sender", party(input.sender()), "target", party(input.target()),
                "envelope", envelope(input.envelope()));
    }

    static Message party(RuleInput.Party party) {
        Descriptors.Descriptor type = PolicyCompiler.NODE;
        DynamicMessage.Builder b = DynamicMessage.newBuilder(type)
                .setField(type.findFieldByName("id"), party.id())
                .setField(type.findFieldByName("kind"), party.kind())
                .setField(type.findFieldByName("parent"), party.parent());
        putAll(b, type.findFieldByName("labels"), party.labels());
        Descriptors.FieldDescriptor group = type.findFieldByName("group");
        party.group().forEach(g -> b.addRepeatedField(group, g));
        return b.build();
    }

    private static Message envelope(RuleInput.EnvelopeFacts envelope) {
        Descriptors.Descriptor type = PolicyCompiler.ENVELOPE;
        DynamicMessage.Builder b = DynamicMessage.newBuilder(type)
                .setField(type.findFieldByName("kind"), envelope.kind())
                .setField(type.findFieldByName("textSize"), envelope.textSize())
                .setField(type.findFieldByName("topic"), envelope.topic());
        putAll(b, type.findFieldByName("meta"), envelope.meta());
        return b.build();
    }

    private static void putAll(DynamicMessage.Builder b, Descriptors.FieldDescriptor field, Map<String, String> map) {
        Descriptors.Descriptor entry = field.getMessageType();
        Descriptors.FieldDescriptor key = entry.findFieldByName("key");
        Descriptors.FieldDescriptor value = entry.findFieldByName("value");
        map.forEach((k, v) -> b.addRepeatedField(field, DynamicMessage.newBuilder(entry).setField(key, k)
                .setField(value, v).build()));
    }
}
