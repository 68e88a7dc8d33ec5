package dev.parley.server.policy;

import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelVariableResolver;
import dev.parley.core.PolicyRules;
import dev.parley.core.RuleInput;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A compiled, immutable rule set: CEL programs in file order, under one version. Programs
 * are thread-safe, so one rule set serves every request until a reload replaces it whole.
 * {@link #observed(Observer)} gives the same rules reporting what they decide (for metrics).
 * <p>
 * A rule's result for a send is kept by the facts the rules read ({@link SendFact}) and
 * reused for every later send with the same facts: the same sender and target, envelopes of
 * the same kind and topic. Rules that read a fact of the message itself (its text's size,
 * its meta) are evaluated at every send instead, so that varying messages do not spoil what
 * is kept. Nothing needs invalidating: a relabelled node, a changed group or another
 * envelope brings other facts, so another key, and a new policy is a new rule set. The
 * observer still hears of every decision, in file order as ever.
 */
final class CelRuleset implements PolicyRules.Ruleset {
    /**
     * Keys kept at most; a full memo starts over. Twice the bench's 64 × 64 pairs; an entry
     * holds one decision's facts (about 1 KB with groups of 128), so at most ~10 MB.
     */
    static final int MEMO_LIMIT = 8192;

    /** One rule, compiled, and the facts of a send it may read. */
    record CompiledRule(String name, PolicyRules.Effect effect, CelRuntime.Program program, Set<SendFact> reads) {
        CompiledRule {
            reads = Set.copyOf(reads);
        }
    }

    /** What one rule gave for one input: whether it holds, or why it could not be evaluated. */
    private record Result(boolean holds, Optional<String> error) {
        static final Result HOLDS = new Result(true, Optional.empty());
        static final Result DOES_NOT_HOLD = new Result(false, Optional.empty());
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
    /** Whether each rule's result can be kept for other sends: it reads nothing of the message itself. */
    private final boolean[] keepable;
    /** The facts the keepable rules read, in a fixed order: what a key holds. */
    private final SendFact[] reads;
    /**
     * Keepable rules' results by the values of {@link #reads}, indexed as {@link #rules}; a
     * slot is filled when a decision first needs it (racing fills write equal results).
     * Shared with the {@link #observed} views: results do not depend on who hears of them.
     */
    private final Map<List<Object>, Result[]> kept;

    CelRuleset(String version, List<CompiledRule> rules) {
        this(version, rules, Observer.NONE, new ConcurrentHashMap<>());
    }

    private CelRuleset(String version, List<CompiledRule> rules, Observer observer, Map<List<Object>, Result[]> kept) {
        this.version = version;
        this.rules = List.copyOf(rules);
        this.observer = observer;
        this.keepable = new boolean[rules.size()];
        Set<SendFact> read = EnumSet.noneOf(SendFact.class);
        for (int i = 0; i < rules.size(); i++) {
            keepable[i] = rules.get(i).reads().stream().noneMatch(SendFact::perMessage);
            if (keepable[i]) {
                read.addAll(rules.get(i).reads());
            }
        }
        this.reads = read.toArray(SendFact[]::new);
        this.kept = kept;
    }

    CelRuleset observed(Observer newObserver) {
        return new CelRuleset(version, rules, newObserver, kept);
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
        Object[] facts = new Object[reads.length];
        for (int i = 0; i < reads.length; i++) {
            facts[i] = reads[i].of(input);
        }
        List<Object> key = Arrays.asList(facts);
        Result[] results = kept.get(key);
        if (results == null) {
            if (kept.size() >= MEMO_LIMIT) {
                kept.clear();
            }
            results = kept.computeIfAbsent(key, k -> new Result[rules.size()]);
        }
        return first(effect, new SendVariables(input), results);
    }

    /** As {@link #first(PolicyRules.Effect, RuleInput)}, over the variables a rule set's environment declares. */
    Optional<PolicyRules.Match> first(PolicyRules.Effect effect, CelVariableResolver variables) {
        return first(effect, variables, new Result[rules.size()]);
    }

    /** The first rule that holds, taking keepable rules' results from {@code results} or filling them in. */
    private Optional<PolicyRules.Match> first(PolicyRules.Effect effect, CelVariableResolver variables, Result[] results) {
        for (int i = 0; i < rules.size(); i++) {
            CompiledRule rule = rules.get(i);
            if (rule.effect() != effect) {
                continue;
            }
            Result result;
            if (keepable[i]) {
                result = results[i];
                if (result == null) {
                    result = evaluate(rule, variables);
                    results[i] = result;
                }
            } else {
                result = evaluate(rule, variables);
            }
            if (result.error().isPresent()) {
                observer.failed(rule.name());
                if (effect != PolicyRules.Effect.DENY) {
                    continue;
                }
            } else if (!result.holds()) {
                continue;
            }
            observer.matched(effect, rule.name());
            return Optional.of(new PolicyRules.Match(rule.name(), result.error()));
        }
        return Optional.empty();
    }

    private static Result evaluate(CompiledRule rule, CelVariableResolver variables) {
        try {
            return Boolean.TRUE.equals(rule.program().eval(variables)) ? Result.HOLDS : Result.DOES_NOT_HOLD;
        } catch (CelEvaluationException | RuntimeException e) {
            return new Result(false, Optional.of(String.valueOf(e.getMessage())));
        }
    }

    /** How many keys are kept now (for tests). */
    int remembered() {
        return kept.size();
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
