package dev.parley.server.policy;

import com.google.protobuf.Descriptors;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelVariableResolver;
import dev.parley.core.PolicyRules;
import dev.parley.core.RuleInput;

import java.util.ArrayList;
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
 * CEL is pure: a rule gives the same result for the same values of the facts it reads
 * ({@link SendFact}). So a send's outcome is kept by every fact the rules read, for the next
 * send alike in all of them; and, for sends that differ only in their message (a text of
 * another size, other meta), each rule that reads neither keeps its result by the facts
 * such rules read, so that only the rules about the message are evaluated again. Nothing
 * needs invalidating: a relabelled node, a changed group or another envelope brings other
 * facts, so another key, and a new policy is a new rule set. The observer still hears of
 * every decision, in file order as ever.
 */
final class CelRuleset implements PolicyRules.Ruleset {
    /**
     * Keys kept at most in each memo; a full memo starts over. Twice the bench's 64 × 64
     * pairs; a key refers to the facts of one decision, groups shared with the graph.
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

    /** What the rules of one effect gave: the rule that matched, if any, and those that failed on the way. */
    private record Outcome(PolicyRules.Effect effect, Optional<PolicyRules.Match> match, List<String> failed) {
        Optional<PolicyRules.Match> toldTo(Observer observer) {
            failed.forEach(observer::failed);
            match.ifPresent(m -> observer.matched(effect, m.rule()));
            return match;
        }
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

    /** The two memos, shared with the {@link #observed} views: what is kept does not depend on who hears of it. */
    private record Memos(Map<List<Object>, Outcome> outcomes, Map<List<Object>, Result[]> results) {
    }

    private final String version;
    private final List<CompiledRule> rules;
    private final Observer observer;
    /** Every fact any rule reads, in a fixed order: an outcome's key, with the effect. */
    private final SendFact[] reads;
    /** Whether each rule reads nothing of the message itself, so that its result can be kept. */
    private final boolean[] keepable;
    /** The facts the keepable rules read, in a fixed order: the key of their results. */
    private final SendFact[] keepableReads;
    /**
     * Outcomes by {@link #reads} and effect; keepable rules' results by {@link #keepableReads},
     * indexed as {@link #rules}, a slot filled when a decision first needs it (racing fills
     * write equal results).
     */
    private final Memos memos;

    CelRuleset(String version, List<CompiledRule> rules) {
        this(version, rules, Observer.NONE, new Memos(new ConcurrentHashMap<>(), new ConcurrentHashMap<>()));
    }

    private CelRuleset(String version, List<CompiledRule> rules, Observer observer, Memos memos) {
        this.version = version;
        this.rules = List.copyOf(rules);
        this.observer = observer;
        this.keepable = new boolean[rules.size()];
        Set<SendFact> all = EnumSet.noneOf(SendFact.class);
        Set<SendFact> ofKeepable = EnumSet.noneOf(SendFact.class);
        for (int i = 0; i < rules.size(); i++) {
            Set<SendFact> read = rules.get(i).reads();
            all.addAll(read);
            keepable[i] = read.stream().noneMatch(SendFact::perMessage);
            if (keepable[i]) {
                ofKeepable.addAll(read);
            }
        }
        this.reads = all.toArray(SendFact[]::new);
        this.keepableReads = ofKeepable.toArray(SendFact[]::new);
        this.memos = memos;
    }

    CelRuleset observed(Observer newObserver) {
        return new CelRuleset(version, rules, newObserver, memos);
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
        List<Object> key = key(reads, input, effect);
        Outcome outcome = memos.outcomes().get(key);
        if (outcome == null) {
            List<Object> keepableKey = key(keepableReads, input, null);
            Result[] results = memos.results().get(keepableKey);
            if (results == null) {
                results = new Result[rules.size()];
                room(memos.results()).put(keepableKey, results);
            }
            outcome = first(effect, new SendVariables(input), results);
            room(memos.outcomes()).put(key, outcome);
        }
        return outcome.toldTo(observer);
    }

    /** As {@link #first(PolicyRules.Effect, RuleInput)}, over the variables a rule set's environment declares. */
    Optional<PolicyRules.Match> first(PolicyRules.Effect effect, CelVariableResolver variables) {
        return first(effect, variables, new Result[rules.size()]).toldTo(observer);
    }

    /** The first rule that holds, taking keepable rules' results from {@code results} or filling them in. */
    private Outcome first(PolicyRules.Effect effect, CelVariableResolver variables, Result[] results) {
        List<String> failed = new ArrayList<>(0);
        for (int i = 0; i < rules.size(); i++) {
            CompiledRule rule = rules.get(i);
            if (rule.effect() != effect) {
                continue;
            }
            Result result = keepable[i] ? results[i] : null;
            if (result == null) {
                result = evaluate(rule, variables);
                if (keepable[i]) {
                    results[i] = result;
                }
            }
            if (result.error().isPresent()) {
                failed.add(rule.name());
                if (effect != PolicyRules.Effect.DENY) {
                    continue;
                }
            } else if (!result.holds()) {
                continue;
            }
            return new Outcome(effect, Optional.of(new PolicyRules.Match(rule.name(), result.error())),
                    List.copyOf(failed));
        }
        return new Outcome(effect, Optional.empty(), List.copyOf(failed));
    }

    private static Result evaluate(CompiledRule rule, CelVariableResolver variables) {
        try {
            return Boolean.TRUE.equals(rule.program().eval(variables)) ? Result.HOLDS : Result.DOES_NOT_HOLD;
        } catch (CelEvaluationException | RuntimeException e) {
            return new Result(false, Optional.of(String.valueOf(e.getMessage())));
        }
    }

    /** The values of {@code facts} in {@code input}, and {@code effect} when given: compared by value. */
    private static List<Object> key(SendFact[] facts, RuleInput input, PolicyRules.Effect effect) {
        Object[] values = new Object[facts.length + 1];
        for (int i = 0; i < facts.length; i++) {
            values[i] = facts[i].of(input);
        }
        values[facts.length] = effect;
        return Arrays.asList(values);
    }

    /** {@code memo}, emptied first when full. */
    private static <V> Map<List<Object>, V> room(Map<List<Object>, V> memo) {
        if (memo.size() >= MEMO_LIMIT) {
            memo.clear();
        }
        return memo;
    }

    /** How many keys each memo holds now, outcomes then rule results (for tests). */
    List<Integer> remembered() {
        return List.of(memos.outcomes().size(), memos.results().size());
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
