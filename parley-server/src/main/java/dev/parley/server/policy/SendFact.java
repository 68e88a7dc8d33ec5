package dev.parley.server.policy;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelExpr;
import dev.parley.core.RuleInput;

import java.util.EnumSet;
import java.util.Set;
import java.util.function.Function;

/**
 * One fact of a send that a rule over sends can read: a field of {@code sender},
 * {@code target} or {@code envelope}. A rule's outcome depends on the facts it reads and on
 * nothing else (CEL has no clock, no randomness and no state), which is what lets a rule
 * set reuse its outcomes ({@link CelRuleset}).
 */
enum SendFact {
    SENDER_ID("sender", "id", in -> in.sender().id()),
    SENDER_KIND("sender", "kind", in -> in.sender().kind()),
    SENDER_LABELS("sender", "labels", in -> in.sender().labels()),
    SENDER_PARENT("sender", "parent", in -> in.sender().parent()),
    SENDER_GROUP("sender", "group", in -> in.sender().group()),
    TARGET_ID("target", "id", in -> in.target().id()),
    TARGET_KIND("target", "kind", in -> in.target().kind()),
    TARGET_LABELS("target", "labels", in -> in.target().labels()),
    TARGET_PARENT("target", "parent", in -> in.target().parent()),
    TARGET_GROUP("target", "group", in -> in.target().group()),
    ENVELOPE_KIND("envelope", "kind", in -> in.envelope().kind()),
    ENVELOPE_TEXT_SIZE("envelope", "textSize", in -> in.envelope().textSize()),
    ENVELOPE_META("envelope", "meta", in -> in.envelope().meta()),
    ENVELOPE_TOPIC("envelope", "topic", in -> in.envelope().topic());

    private final String variable;
    private final String field;
    private final Function<RuleInput, Object> value;

    SendFact(String variable, String field, Function<RuleInput, Object> value) {
        this.variable = variable;
        this.field = field;
        this.value = value;
    }

    /**
     * Whether the fact belongs to the message itself and so differs from send to send (a
     * text's size, meta that carries ids) rather than to who talks to whom about what.
     */
    boolean perMessage() {
        return this == ENVELOPE_TEXT_SIZE || this == ENVELOPE_META;
    }

    /** This fact of {@code input}: a string, a long, a map or a list, all compared by value. */
    Object of(RuleInput input) {
        return value.apply(input);
    }

    /**
     * The facts a checked rule may read. A variable used other than through one of its
     * fields ({@code sender == target}, {@code sender.?labels}, a comprehension variable
     * of the same name) counts as reading all of its fields: more than it reads is safe,
     * less never happens.
     */
    static Set<SendFact> readBy(CelAbstractSyntaxTree ast) {
        Set<SendFact> reads = EnumSet.noneOf(SendFact.class);
        collect(ast.getExpr(), reads);
        return reads;
    }

    private static void collect(CelExpr expr, Set<SendFact> reads) {
        switch (expr.getKind()) {
            case IDENT -> wholeVariable(expr.ident().name(), reads);
            case SELECT -> {
                CelExpr operand = expr.select().operand();
                if (operand.getKind() == CelExpr.ExprKind.Kind.IDENT) {
                    field(operand.ident().name(), expr.select().field(), reads);
                } else {
                    collect(operand, reads);
                }
            }
            case CALL -> {
                expr.call().target().ifPresent(t -> collect(t, reads));
                expr.call().args().forEach(a -> collect(a, reads));
            }
            case LIST -> expr.list().elements().forEach(e -> collect(e, reads));
            case STRUCT -> expr.struct().entries().forEach(e -> collect(e.value(), reads));
            case MAP -> expr.map().entries().forEach(e -> {
                collect(e.key(), reads);
                collect(e.value(), reads);
            });
            case COMPREHENSION -> {
                CelExpr.CelComprehension c = expr.comprehension();
                for (CelExpr part : new CelExpr[] {c.iterRange(), c.accuInit(), c.loopCondition(), c.loopStep(),
                        c.result()}) {
                    collect(part, reads);
                }
            }
            case CONSTANT, NOT_SET -> {
            }
        }
    }

    private static void field(String variable, String field, Set<SendFact> reads) {
        for (SendFact fact : values()) {
            if (fact.variable.equals(variable) && fact.field.equals(field)) {
                reads.add(fact);
                return;
            }
        }
        wholeVariable(variable, reads); // not a field of ours: a comprehension variable, say
    }

    /** Every field of {@code name}, or of the variable a qualified name ({@code sender.labels}) starts with. */
    private static void wholeVariable(String name, Set<SendFact> reads) {
        for (SendFact fact : values()) {
            if (name.equals(fact.variable) || name.startsWith(fact.variable + ".")) {
                reads.add(fact);
            }
        }
    }
}
