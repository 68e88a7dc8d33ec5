package dev.parley.server.policy;

import com.google.protobuf.Descriptors;

import dev.cel.bundle.CelFactory;
import dev.cel.common.types.StructTypeReference;
import dev.parley.core.PolicyRules;
import dev.parley.core.PolicyRules.Effect;
import dev.parley.core.RuleInput;
import dev.parley.core.RuleInput.EnvelopeFacts;
import dev.parley.core.RuleInput.Party;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rule set reuses a send's outcome for later sends with the same facts: every fact a rule
 * reads still decides (no stale outcome), facts no rule reads share one outcome, and the
 * observer hears of every decision, reused or not.
 */
class RuleOutcomeReuseTest {
    private static final Party SENDER = new Party("s1", "agent", Map.of("role", "coder"), "lead", List.of("lead", "s1", "s2"));
    private static final Party TARGET = new Party("t1", "external", Map.of("tier", "pro"), "lead", List.of("lead", "t1"));
    private static final EnvelopeFacts ENVELOPE = new EnvelopeFacts("chat", 10, Map.of("k", "v"), "");
    private static final RuleInput PLAIN = new RuleInput(SENDER, TARGET, ENVELOPE);

    /** One deny rule per fact, each matching only the value {@link #changed} gives that fact. */
    private static final Map<String, String> RULE_PER_FACT = Map.ofEntries(
            Map.entry("sender-id", "sender.id == 'bad'"),
            Map.entry("sender-kind", "sender.kind == 'bad'"),
            Map.entry("sender-labels", "'bad' in sender.labels"),
            Map.entry("sender-parent", "sender.parent == 'bad'"),
            Map.entry("sender-group", "'bad' in sender.group"),
            Map.entry("target-id", "target.id == 'bad'"),
            Map.entry("target-kind", "target.kind == 'bad'"),
            Map.entry("target-labels", "'bad' in target.labels"),
            Map.entry("target-parent", "target.parent == 'bad'"),
            Map.entry("target-group", "'bad' in target.group"),
            Map.entry("envelope-kind", "envelope.kind == 'bad'"),
            Map.entry("envelope-textSize", "envelope.textSize == 13"),
            Map.entry("envelope-meta", "'bad' in envelope.meta"),
            Map.entry("envelope-topic", "envelope.topic == 'bad'"));

    private static CelRuleset compile(List<PolicyCompiler.RuleSpec> rules) throws PolicyCompiler.Refused {
        return new PolicyCompiler().compile(new PolicyCompiler.Document(rules, List.of())).sends();
    }

    private static PolicyCompiler.RuleSpec deny(String name, String when) {
        return new PolicyCompiler.RuleSpec(name, Effect.DENY, when);
    }

    private static Party with(Party p, String field) {
        return switch (field) {
            case "id" -> new Party("bad", p.kind(), p.labels(), p.parent(), p.group());
            case "kind" -> new Party(p.id(), "bad", p.labels(), p.parent(), p.group());
            case "labels" -> new Party(p.id(), p.kind(), Map.of("bad", ""), p.parent(), p.group());
            case "parent" -> new Party(p.id(), p.kind(), p.labels(), "bad", p.group());
            case "group" -> new Party(p.id(), p.kind(), p.labels(), p.parent(), List.of("lead", "bad"));
            default -> throw new IllegalArgumentException(field);
        };
    }

    /** {@link #PLAIN} with one fact changed so that exactly its rule matches. */
    private static RuleInput changed(String rule) {
        String field = rule.substring(rule.indexOf('-') + 1);
        EnvelopeFacts e = ENVELOPE;
        return switch (rule.substring(0, rule.indexOf('-'))) {
            case "sender" -> new RuleInput(with(SENDER, field), TARGET, ENVELOPE);
            case "target" -> new RuleInput(SENDER, with(TARGET, field), ENVELOPE);
            default -> new RuleInput(SENDER, TARGET, switch (field) {
                case "kind" -> new EnvelopeFacts("bad", e.textSize(), e.meta(), e.topic());
                case "textSize" -> new EnvelopeFacts(e.kind(), 13, e.meta(), e.topic());
                case "meta" -> new EnvelopeFacts(e.kind(), e.textSize(), Map.of("bad", "1"), e.topic());
                case "topic" -> new EnvelopeFacts(e.kind(), e.textSize(), e.meta(), "bad");
                default -> throw new IllegalArgumentException(field);
            });
        };
    }

    @Test
    void everyFactARuleReadsStillDecidesAfterAnOutcomeIsKept() throws Exception {
        List<PolicyCompiler.RuleSpec> specs = new ArrayList<>();
        RULE_PER_FACT.forEach((name, when) -> specs.add(deny(name, when)));
        CelRuleset rules = compile(specs);
        assertEquals(Optional.empty(), rules.first(Effect.DENY, PLAIN));

        for (String rule : RULE_PER_FACT.keySet()) {
            for (int i = 0; i < 2; i++) { // the second time from the kept outcome
                assertEquals(Optional.of(new PolicyRules.Match(rule, Optional.empty())),
                        rules.first(Effect.DENY, changed(rule)), rule);
                assertEquals(Optional.empty(), rules.first(Effect.DENY, PLAIN), "after " + rule);
            }
        }
        // outcomes: one per input; rule results: the text's size and meta are no part of their key
        assertEquals(List.of(1 + RULE_PER_FACT.size(), 1 + RULE_PER_FACT.size() - 2), rules.remembered());
    }

    @Test
    void factsNoRuleReadsShareOneOutcome() throws Exception {
        CelRuleset rules = compile(List.of(deny("coders-only", "sender.labels['role'] != 'coder'"),
                deny("no-secrets", "envelope.kind == 'secret' && target.kind == 'agent'")));
        UnaryOperator<RuleInput> otherSize = in -> new RuleInput(in.sender(), in.target(),
                new EnvelopeFacts(in.envelope().kind(), 4096, Map.of("trace", "x"), "t"));
        UnaryOperator<RuleInput> otherTarget = in -> new RuleInput(in.sender(), with(TARGET, "labels"), in.envelope());
        for (RuleInput input : List.of(PLAIN, otherSize.apply(PLAIN), otherTarget.apply(PLAIN),
                otherSize.apply(otherTarget.apply(PLAIN)))) {
            assertEquals(Optional.empty(), rules.first(Effect.DENY, input));
        }
        assertEquals(List.of(1, 1), rules.remembered(), "text size, meta, topic and target labels are read by no rule");

        RuleInput secret = new RuleInput(SENDER, TARGET, new EnvelopeFacts("secret", 10, Map.of(), ""));
        assertEquals(Optional.empty(), rules.first(Effect.DENY, secret), "the target is not an agent");
        assertEquals(List.of(2, 2), rules.remembered());
    }

    @Test
    void rulesReadingTheMessageItselfDecideEverySendAndTheOthersAreStillKept() throws Exception {
        CelRuleset rules = compile(List.of(deny("large", "envelope.textSize > 100 && sender.labels['role'] == 'coder'"),
                deny("traced", "'trace' in envelope.meta"), deny("to-gold", "target.labels['tier'] == 'gold'")));
        for (long size : new long[] {10, 101, 10, 5000}) {
            RuleInput input = new RuleInput(SENDER, TARGET, new EnvelopeFacts("chat", size, Map.of(), ""));
            assertEquals(size > 100 ? Optional.of("large") : Optional.empty(),
                    rules.first(Effect.DENY, input).map(PolicyRules.Match::rule), "size " + size);
        }
        RuleInput traced = new RuleInput(SENDER, TARGET, new EnvelopeFacts("chat", 10, Map.of("trace", "t-1"), ""));
        assertEquals("traced", rules.first(Effect.DENY, traced).orElseThrow().rule());
        assertEquals(List.of(4, 1), rules.remembered(), "rule results by the target's labels alone");
        RuleInput gold = new RuleInput(SENDER, new Party("t2", "agent", Map.of("tier", "gold"), "", List.of()), ENVELOPE);
        assertEquals("to-gold", rules.first(Effect.DENY, gold).orElseThrow().rule());
        assertEquals(List.of(5, 2), rules.remembered());
    }

    @Test
    void theObserverHearsOfEveryDecisionReusedOrNot() throws Exception {
        List<String> heard = new ArrayList<>();
        CelRuleset rules = compile(List.of(deny("missing-key", "sender.labels['team'] == 'red'"),
                new PolicyCompiler.RuleSpec("pro-targets", Effect.ALLOW, "target.labels['tier'] == 'pro'")))
                .observed(new CelRuleset.Observer() {
                    @Override
                    public void matched(Effect effect, String rule) {
                        heard.add(effect.wire() + " " + rule);
                    }

                    @Override
                    public void failed(String rule) {
                        heard.add("failed " + rule);
                    }
                });
        for (int i = 0; i < 3; i++) {
            Optional<PolicyRules.Match> deny = rules.first(Effect.DENY, PLAIN);
            assertEquals("missing-key", deny.orElseThrow().rule());
            assertTrue(deny.get().error().orElseThrow().contains("team"), deny.toString()); // failed closed
            assertEquals("pro-targets", rules.first(Effect.ALLOW, PLAIN).orElseThrow().rule());
        }
        assertEquals(List.of("failed missing-key", "deny missing-key", "allow pro-targets").size() * 3, heard.size());
        for (int i = 0; i < heard.size(); i += 3) {
            assertEquals(List.of("failed missing-key", "deny missing-key", "allow pro-targets"), heard.subList(i, i + 3));
        }
        assertEquals(List.of(2, 1), rules.remembered(), "an outcome per effect, both effects' rule results under one key");
    }

    @Test
    void theKeptOutcomesAreBounded() throws Exception {
        CelRuleset rules = compile(List.of(deny("kinds", "envelope.kind == 'bad'")));
        for (int i = 0; i <= CelRuleset.MEMO_LIMIT; i++) {
            rules.first(Effect.DENY, new RuleInput(SENDER, TARGET, new EnvelopeFacts("kind-" + i, 10, Map.of(), "")));
        }
        assertTrue(rules.remembered().stream().allMatch(n -> n <= CelRuleset.MEMO_LIMIT), "kept " + rules.remembered());
        assertEquals(Optional.empty(), rules.first(Effect.DENY, PLAIN));
    }

    private static Set<SendFact> union(Set<SendFact> facts, SendFact more) {
        Set<SendFact> all = EnumSet.copyOf(facts);
        all.add(more);
        return all;
    }

    /** The variables of rules over sends, as the policy compiler declares them. */
    private static final Map<String, Descriptors.Descriptor> SEND_VARIABLES = Map.of(
            "sender", PolicyCompiler.NODE, "target", PolicyCompiler.NODE, "envelope", PolicyCompiler.ENVELOPE);

    private static final dev.cel.bundle.Cel CEL = CelFactory.standardCelBuilder()
            .setOptions(dev.cel.common.CelOptions.current().enableOptionalSyntax(true).build())
            .setStandardMacros(dev.cel.parser.CelStandardMacro.STANDARD_MACROS)
            .addCompilerLibraries(dev.cel.extensions.CelOptionalLibrary.INSTANCE)
            .addMessageTypes(PolicyCompiler.NODE, PolicyCompiler.ENVELOPE)
            .addVar("sender", StructTypeReference.create(PolicyCompiler.NODE.getFullName()))
            .addVar("target", StructTypeReference.create(PolicyCompiler.NODE.getFullName()))
            .addVar("envelope", StructTypeReference.create(PolicyCompiler.ENVELOPE.getFullName()))
            .build();

    /**
     * Every field a rule can read is a fact of its own: a field added to the rules' messages
     * without a {@link SendFact} would be read by rules yet missing from the keys of kept
     * outcomes, and a kept outcome would then answer for a send that differs in it.
     */
    @Test
    void everyFieldOfTheRulesVariablesIsAFactOfItsOwn() throws Exception {
        Set<SendFact> all = EnumSet.noneOf(SendFact.class);
        for (var variable : SEND_VARIABLES.entrySet()) {
            for (Descriptors.FieldDescriptor field : variable.getValue().getFields()) {
                String when = "has(" + variable.getKey() + "." + field.getName() + ")";
                Set<SendFact> reads = SendFact.readBy(CEL.compile(when).getAst());
                assertEquals(1, reads.size(), when + " reads " + reads);
                all.addAll(reads);
            }
        }
        assertEquals(EnumSet.allOf(SendFact.class), all);
    }

    @Test
    void aRuleReadsTheFieldsItNamesOrTheWholeVariableItUsesOtherwise() {
        var cel = CEL;
        Map<String, Set<SendFact>> expected = Map.of(
                "sender.labels['a'] == 'x'", EnumSet.of(SendFact.SENDER_LABELS),
                "has(target.labels) && envelope.textSize > 1", EnumSet.of(SendFact.TARGET_LABELS,
                        SendFact.ENVELOPE_TEXT_SIZE),
                "envelope.meta.exists(k, k.startsWith(target.id))", EnumSet.of(SendFact.ENVELOPE_META,
                        SendFact.TARGET_ID),
                // the comprehension's own "sender" counts as the whole variable: more than is read
                "[envelope.topic].exists(sender, sender == '')", union(EnumSet.range(SendFact.SENDER_ID,
                        SendFact.SENDER_GROUP), SendFact.ENVELOPE_TOPIC),
                "sender == target", EnumSet.range(SendFact.SENDER_ID, SendFact.TARGET_GROUP),
                "sender.?labels.orValue({}).size() > 0", EnumSet.range(SendFact.SENDER_ID, SendFact.SENDER_GROUP),
                "1 == 1", EnumSet.noneOf(SendFact.class));
        expected.forEach((when, reads) -> {
            try {
                assertEquals(reads, SendFact.readBy(cel.compile(when).getAst()), when);
            } catch (dev.cel.common.CelValidationException e) {
                throw new AssertionError(when, e);
            }
        });
    }
}
