package dev.parley.server.agents;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.parley.core.AgentSpec;
import dev.parley.core.AgentSpecFormat;
import dev.parley.core.DurationText;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.PromptFormat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Agent specs as people write them, in YAML. Every field is checked and named in the error;
 * an unknown field (a typo) is refused rather than ignored.
 */
public final class AgentSpecs {
    /** Most bytes a spec may have: it is a short document, kept in the store. */
    public static final int MAX_BYTES = 64 * 1024;
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final Set<String> FIELDS = Set.of("id", "parent", "runner", "command", "env", "workdir", "wake",
            "idleTimeout", "timeout", "limits", "skills", "comms", "restart", "toolBlocklist", "toolKinds",
            "gateway",
            "maxMessagesPerPrompt");
    private static final Set<String> LIMITS = Set.of("memory", "cpuTime", "openFiles");
    private static final java.util.regex.Pattern MEMORY = java.util.regex.Pattern.compile("^(\\d{1,15})([KMG])$");

    /** Specs as YAML text, for the core's agents: read, and children made from templates. */
    public static final AgentSpecFormat YAML_FORMAT = new AgentSpecFormat() {
        @Override
        public AgentSpec read(String text) {
            return parse(text);
        }

        @Override
        public String child(String template, NodeId id, NodeId parent, List<NodeId> talksWith) {
            return AgentSpecs.child(template, id, parent, talksWith);
        }
    };

    private AgentSpecs() {
    }

    /**
     * The text of a child's spec: {@code template}'s fields, with the child's {@code id},
     * {@code parent} and {@code comms.allow} in place of the template's own. (Comments in the
     * template are not carried over.)
     */
    static String child(String template, NodeId id, NodeId parent, List<NodeId> talksWith) {
        try {
            ObjectNode spec = (ObjectNode) YAML.readTree(template); // a stored spec: it read before
            spec.put("id", id.value());
            spec.put("parent", parent.value());
            spec.remove("comms");
            if (!talksWith.isEmpty()) {
                ArrayNode allow = spec.putObject("comms").putArray("allow");
                talksWith.forEach(node -> allow.add(node.value()));
            }
            return YAML.writeValueAsString(spec);
        } catch (JacksonException | ClassCastException e) {
            throw AgentSpec.invalid("the template's spec does not read: " + e.getMessage());
        }
    }

    /** The spec {@code text} holds; {@code invalid_spec} saying which field and why when it holds none. */
    public static AgentSpec parse(String text) {
        if (text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw AgentSpec.invalid("a spec is at most " + MAX_BYTES + " bytes");
        }
        JsonNode root;
        try {
            root = YAML.readTree(text);
        } catch (JacksonException e) {
            throw AgentSpec.invalid("not YAML (line " + e.getLocation().getLineNr() + "): "
                    + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw AgentSpec.invalid("a spec is a YAML mapping of fields (id, command, …)");
        }
        for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!FIELDS.contains(name)) {
                throw AgentSpec.invalid("unknown field '" + name + "' (fields: " + String.join(", ", FIELDS.stream()
                        .sorted().toList()) + ")");
            }
        }
        return new AgentSpec(nodeId(root, "id").orElseThrow(() -> AgentSpec.invalid("id: required")),
                nodeId(root, "parent"),
                choice(root, "runner", AgentSpec.Runner.values(), AgentSpec.Runner::wire)
                        .orElse(AgentSpec.Runner.COMMAND),
                command(root.get("command")), env(root.get("env")), string(root, "workdir"),
                choice(root, "wake", AgentSpec.Wake.values(), AgentSpec.Wake::wire).orElse(AgentSpec.Wake.ON_MESSAGE),
                duration(root, "idleTimeout", "idleTimeout").orElse(AgentSpec.DEFAULT_IDLE),
                duration(root, "timeout", "timeout").orElse(AgentSpec.DEFAULT_TIMEOUT),
                limits(root.get("limits")), strings(root.get("skills"), "skills"), comms(root.get("comms")),
                choice(root, "restart", AgentSpec.Restart.values(), AgentSpec.Restart::wire),
                new AgentSpec.ToolBlocklist(strings(root.get("toolBlocklist"), "toolBlocklist")),
                AgentSpec.ToolKindOverrides.of(toolKinds(root.get("toolKinds"))),
                string(root, "gateway"), count(root, "maxMessagesPerPrompt").orElse(PromptFormat.DEFAULT_MAX_MESSAGES));
    }

    private static Optional<Integer> count(JsonNode root, String field) {
        JsonNode value = root.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.canConvertToInt() || !value.isIntegralNumber()) {
            throw AgentSpec.invalid(field + ": a whole number");
        }
        return Optional.of(value.intValue());
    }

    private static Optional<String> string(JsonNode root, String field) {
        JsonNode value = root.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isTextual() || value.asText().isBlank()) {
            throw AgentSpec.invalid(field + ": a non-empty string");
        }
        return Optional.of(value.asText());
    }

    private static Optional<NodeId> nodeId(JsonNode root, String field) {
        try {
            return string(root, field).map(NodeId::of);
        } catch (ParleyException e) {
            throw AgentSpec.invalid(field + ": " + e.getMessage());
        }
    }

    /** The value of {@code field} among {@code values}, by its {@code wire} name, if the field is given. */
    private static <E> Optional<E> choice(JsonNode root, String field, E[] values,
                                          java.util.function.Function<E, String> wire) {
        Optional<String> given = string(root, field);
        if (given.isEmpty()) {
            return Optional.empty();
        }
        for (E value : values) {
            if (wire.apply(value).equals(given.get().toLowerCase(Locale.ROOT))) {
                return Optional.of(value);
            }
        }
        throw AgentSpec.invalid(field + ": one of " + String.join(", ", java.util.Arrays.stream(values).map(wire)
                .toList()) + ", not '" + given.get() + "'");
    }

    /** A list of strings, or none. */
    private static List<String> strings(JsonNode list, String field) {
        List<String> out = new ArrayList<>();
        if (list == null || list.isNull()) {
            return out;
        }
        if (!list.isArray()) {
            throw AgentSpec.invalid(field + ": a list: [a, b, …]");
        }
        for (JsonNode item : list) {
            if (!item.isTextual()) {
                throw AgentSpec.invalid(field + ": each item a string");
            }
            out.add(item.asText());
        }
        return out;
    }

    /** {@code toolKinds: {Tool: kind, …}} as written; the core checks names and kinds. */
    private static Map<String, String> toolKinds(JsonNode kinds) {
        Map<String, String> out = new LinkedHashMap<>();
        if (kinds == null || kinds.isNull()) {
            return out;
        }
        if (!kinds.isObject()) {
            throw AgentSpec.invalid("toolKinds: a mapping Tool: kind (read, edit, execute, …)");
        }
        kinds.fields().forEachRemaining(e -> {
            if (!e.getValue().isTextual()) {
                throw AgentSpec.invalid("toolKinds: " + e.getKey() + ": a kind name (read, edit, execute, …)");
            }
            out.put(e.getKey(), e.getValue().asText());
        });
        return out;
    }

    /** {@code limits: {memory: 512M, cpuTime: 60s, openFiles: 256}}, each optional. */
    private static AgentSpec.Limits limits(JsonNode limits) {
        if (limits == null || limits.isNull()) {
            return AgentSpec.Limits.NONE;
        }
        if (!limits.isObject()) {
            throw AgentSpec.invalid("limits: a mapping of memory, cpuTime, openFiles");
        }
        for (Iterator<String> names = limits.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!LIMITS.contains(name)) {
                throw AgentSpec.invalid("limits: unknown field '" + name + "' (fields: cpuTime, memory, openFiles)");
            }
        }
        Optional<Long> memory = string(limits, "memory").map(text -> {
            var m = MEMORY.matcher(text.strip());
            if (!m.matches()) {
                throw AgentSpec.invalid("limits.memory: a size such as 512M, 2G or 65536K, not '" + text + "'");
            }
            int shift = switch (m.group(2)) {
                case "K" -> 10;
                case "M" -> 20;
                default -> 30;
            };
            return Long.parseLong(m.group(1)) << shift;
        });
        Optional<Integer> openFiles = Optional.ofNullable(limits.get("openFiles")).map(n -> {
            if (!n.canConvertToInt()) {
                throw AgentSpec.invalid("limits.openFiles: a whole number");
            }
            return n.intValue();
        });
        return new AgentSpec.Limits(memory, duration(limits, "cpuTime", "limits.cpuTime"), openFiles);
    }

    /** {@code comms: {allow: [node, …]}}: the nodes the agent talks with beyond its group. */
    private static List<NodeId> comms(JsonNode comms) {
        if (comms == null || comms.isNull()) {
            return List.of();
        }
        if (!comms.isObject() || comms.size() != 1 || !comms.has("allow")) {
            throw AgentSpec.invalid("comms: a mapping with one field, allow: [node, …]");
        }
        try {
            return strings(comms.get("allow"), "comms.allow").stream().map(NodeId::of).toList();
        } catch (ParleyException e) {
            throw e.code() == ErrorCode.INVALID_SPEC ? e : AgentSpec.invalid("comms.allow: " + e.getMessage());
        }
    }

    private static List<String> command(JsonNode command) {
        if (command == null || command.isNull()) {
            throw AgentSpec.invalid("command: required, a list: [program, arg, …]");
        }
        if (!command.isArray()) {
            throw AgentSpec.invalid("command: a list: [program, arg, …] (for a shell line: [sh, -c, \"…\"])");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode arg : command) {
            if (!arg.isValueNode() || arg.isNull()) {
                throw AgentSpec.invalid("command: each item a string");
            }
            out.add(arg.asText());
        }
        return out;
    }

    private static Map<String, AgentSpec.EnvValue> env(JsonNode env) {
        Map<String, AgentSpec.EnvValue> out = new LinkedHashMap<>();
        if (env == null || env.isNull()) {
            return out;
        }
        if (!env.isObject()) {
            throw AgentSpec.invalid("env: a mapping NAME: value, or NAME: {file: path} for a secret");
        }
        env.fields().forEachRemaining(e -> {
            JsonNode value = e.getValue();
            if (value.isObject()) {
                JsonNode file = value.get("file");
                if (value.size() != 1 || file == null || !file.isTextual() || file.asText().isBlank()) {
                    throw AgentSpec.invalid("env: " + e.getKey() + ": {file: path} is the only form of a secret");
                }
                out.put(e.getKey(), new AgentSpec.EnvValue.File(file.asText()));
            } else if (value.isValueNode() && !value.isNull()) {
                out.put(e.getKey(), new AgentSpec.EnvValue.Text(value.asText()));
            } else {
                throw AgentSpec.invalid("env: " + e.getKey() + ": a value, or {file: path}");
            }
        });
        return out;
    }

    /** The duration {@code field} of {@code object} gives, if any; refusals name it as {@code name}. */
    private static Optional<Duration> duration(JsonNode object, String field, String name) {
        try {
            return string(object, field).map(DurationText::parse);
        } catch (IllegalArgumentException e) {
            throw AgentSpec.invalid(name + ": " + e.getMessage());
        }
    }
}
