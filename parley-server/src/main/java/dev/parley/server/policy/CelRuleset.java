package dev.parley.server.policy;

import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelVariableResolver;
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
        return first(effect, new SendVariables(input));
    }

    /** As {@link #first(PolicyRules.Effect, RuleInput)}, over the variables a rule set's environment declares. */
    Optional<PolicyRules.Match> first(PolicyRules.Effect effect, CelVariableResolver variables) {
        for (CompiledRule rule : rules) {
            if (rule.effect() != effect) {
                continue;
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

    /** Variables from a map that is built when a rule first reads one, once for all the rules. */
    static CelVariableResolver variables(Supplier<Map<String, Object>> map) {
        return new CelVariableResolver() {
            private Map<String, Object> built;

            @Override
            public Optional<Object> find(String name) {
                if (built == null) {
                    built = map.get();
                }
                return Optional.ofNullable(built.get(name));
            }
        };
    }

    /**
     * A send's variables, each made into a message when a rule first reads it and kept for the
     * other rules (one decision runs on one thread): the 20 rules of a policy read them ~60 times.
     */
    private static final class SendVariables implements CelVariableResolver {
        private final RuleInput input;
        private Message sender;
        private Message target;
        private Message envelope;

        SendVariables(RuleInput input) {
            this.input = input;
        }

        @Override
        public Optional<Object> find(String name) {
            return Optional.ofNullable(switch (name) {
                case "sender" -> sender != null ? sender : (sender = party(input.sender()));
                case "target" -> target != null ? target : (target = party(input.target()));
                case "envelope" -> envelope != null ? envelope : (envelope = envelope(input.envelope()));
                default -> null;
            });
        }
    }

    private static final Descriptors.FieldDescriptor NODE_ID = PolicyCompiler.NODE.findFieldByName("id");
    private static final Descriptors.FieldDescriptor NODE_KIND = PolicyCompiler.NODE.findFieldByName("kind");
    private static final Descriptors.FieldDescriptor NODE_PARENT = PolicyCompiler.NODE.findFieldByName("parent");
    private static final Descriptors.FieldDescriptor NODE_LABELS = PolicyCompiler.NODE.findFieldByName("labels");
    private static final Descriptors.FieldDescriptor NODE_GROUP = PolicyCompiler.NODE.findFieldByName("group");
    private static final Descriptors.FieldDescriptor ENVELOPE_KIND = PolicyCompiler.ENVELOPE.findFieldByName("kind");
    private static final Descriptors.FieldDescriptor ENVELOPE_TEXT_SIZE = PolicyCompiler.ENVELOPE.findFieldByName("textSize");
    private static final Descriptors.FieldDescriptor ENVELOPE_TOPIC = PolicyCompiler.ENVELOPE.findFieldByName("topic");
    private static final Descriptors.FieldDescriptor ENVELOPE_META = PolicyCompiler.ENVELOPE.findFieldByName("meta");

    static Message party(RuleInput.Party party) {
        DynamicMessage.Builder b = DynamicMessage.newBuilder(PolicyCompiler.NODE)
                .setField(NODE_ID, party.id())
                .setField(NODE_KIND, party.kind())
                .setField(NODE_PARENT, party.parent());
        putAll(b, NODE_LABELS, party.labels());
        return b.setField(NODE_GROUP, party.group()).build(); // the whole list at once: groups have hundreds
    }

    private static Message envelope(RuleInput.EnvelopeFacts envelope) {
        DynamicMessage.Builder b = DynamicMessage.newBuilder(PolicyCompiler.ENVELOPE)
                .setField(ENVELOPE_KIND, envelope.kind())
                .setField(ENVELOPE_TEXT_SIZE, envelope.textSize())
                .setField(ENVELOPE_TOPIC, envelope.topic());
        putAll(b, ENVELOPE_META, envelope.meta());
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
