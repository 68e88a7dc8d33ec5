package dev.parley.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.NullValue;
import dev.cel.runtime.CelVariableResolver;
import dev.parley.core.PolicyRules;
import dev.parley.core.RuleInput;
import dev.parley.trace.TraceEvent;
import dev.parley.trace.permission.PermissionAsk;
import dev.parley.trace.permission.PermissionRules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The policy's permission rules, compiled: a deny rule that holds (or cannot be evaluated:
 * fail closed) decides first, then an allow rule that holds; else no opinion.
 */
public final class PermissionRuleset {
    static final PermissionRuleset NONE = new PermissionRuleset(new CelRuleset("", List.of()));

    private final CelRuleset rules;

    PermissionRuleset(CelRuleset rules) {
        this.rules = rules;
    }

    /** What the rules say about {@code ask} from {@code node}. */
    public Optional<PermissionRules.Ruling> rule(PermissionAsk ask, RuleInput.Party node) {
        if (rules.isEmpty()) {
            return Optional.empty();
        }
        CelVariableResolver variables = CelRuleset.variables(() -> Map.of("tool", ask.tool(),
                "kind", ask.kind().wire(), "input", value(ask.input()), "node", CelRuleset.party(node)));
        return rules.first(PolicyRules.Effect.DENY, variables)
                .map(m -> new PermissionRules.Ruling(m.rule(), TraceEvent.Verdict.DENY))
                .or(() -> rules.first(PolicyRules.Effect.ALLOW, variables)
                        .map(m -> new PermissionRules.Ruling(m.rule(), TraceEvent.Verdict.ALLOW)));
    }

    /** A JSON value as CEL reads it: maps, lists, strings, int64s, doubles, bools, null. */
    private static Object value(JsonNode json) {
        return switch (json.getNodeType()) {
            case OBJECT -> {
                Map<String, Object> map = new LinkedHashMap<>();
                json.properties().forEach(e -> map.put(e.getKey(), value(e.getValue())));
                yield map;
            }
            case ARRAY -> {
                List<Object> list = new ArrayList<>();
                json.forEach(item -> list.add(value(item)));
                yield list;
            }
            case STRING -> json.textValue();
            case NUMBER -> json.canConvertToExactIntegral() && json.canConvertToLong() ? (Object) json.longValue()
                    : (Object) json.doubleValue();
            case BOOLEAN -> json.booleanValue();
            default -> NullValue.NULL_VALUE;
        };
    }
}
