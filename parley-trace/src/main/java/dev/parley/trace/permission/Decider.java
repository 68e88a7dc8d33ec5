package dev.parley.trace.permission;

import dev.parley.core.AgentSpec;
import dev.parley.trace.TraceEvent;

import java.time.Duration;
import java.util.Optional;

/** One way a permission request is decided; none, when it has no opinion and the next decider is asked. */
public sealed interface Decider {

    /** The agent's tool blocklist: a tool it names is denied; about the rest it has no opinion. */
    record Blocklist(AgentSpec.ToolBlocklist tools) implements Decider {
    }

    /** The policy's permission rules: the rule that holds decides. */
    record Rules(PermissionRules rules) implements Decider {
    }

    /** A node (the agent's parent, or a named human) is asked, and its answer within {@code timeout} decides. */
    record AskNode(String approver, Duration timeout, Approvals approvals) implements Decider {
        public AskNode {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout: more than zero");
            }
        }
    }

    /** What this decider says about {@code ask}. */
    default Optional<Decision> decide(PermissionAsk ask) throws InterruptedException {
        return switch (this) {
            case Blocklist b -> b.tools().blocks(ask.tool())
                    ? Optional.of(Decision.deny("blocklist", "the agent's tool blocklist names " + ask.tool()))
                    : Optional.empty();
            case Rules r -> r.rules().rule(ask).map(ruling -> new Decision(ruling.verdict(), "policy:" + ruling.rule(),
                    "the policy rule " + ruling.rule() + " holds"));
            case AskNode a -> Optional.of(a.approvals().ask(ask, a.approver(), a.timeout())
                    .map(answer -> answered(a.approver(), answer))
                    .orElseGet(() -> Decision.deny("timeout", a.approver() + " gave no answer within "
                            + a.timeout().toMillis() + " ms")));
        };
    }

    /** A reply that is neither allow nor deny is no permission. */
    private static Decision answered(String approver, Answer answer) {
        String by = "node:" + approver;
        return answer.verdict().map(verdict -> verdict == TraceEvent.Verdict.ALLOW
                        ? Decision.allow(by, approver + " allowed it")
                        : Decision.deny(by, approver + " denied it"))
                .orElseGet(() -> Decision.deny(by, approver + " answered neither allow nor deny"));
    }
}
