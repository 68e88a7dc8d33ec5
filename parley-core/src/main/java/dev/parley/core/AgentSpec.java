package dev.parley.core;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * How the hub runs a managed agent: the node it is, the command, its environment (secrets only
 * by file), when it runs ({@link Wake}) and for how long it may idle or work on one envelope,
 * the skills its card lists, the nodes it talks with beyond its group ({@code comms.allow}:
 * a grant each way), what becomes of its process when it ends ({@link Restart}, given only for
 * {@code runner: process}), the tools it must not use, the kinds it gives its tools where its
 * adapter's table says otherwise or nothing, and the gateway that runs it (on a
 * federation: the one that owns its node). Validated here, whatever the text it was read from.
 */
public record AgentSpec(NodeId id, Optional<NodeId> parent, Runner runner, List<String> command,
                        Map<String, EnvValue> env, Optional<String> workdir, Wake wake, Duration idleTimeout,
                        Duration timeout, Limits limits, List<String> skills, List<NodeId> talksWith,
                        Optional<Restart> restart, ToolBlocklist toolBlocklist, ToolKindOverrides toolKinds,
                        Optional<String> gateway, int maxMessagesPerPrompt) {
    /** How long an on-message agent with nothing to do keeps running, when its spec does not say. */
    public static final Duration DEFAULT_IDLE = Duration.ofMinutes(5);
    /** How long one envelope may take, when the spec does not say. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration MAX = Duration.ofDays(1);
    private static final Pattern ENV_NAME = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]{0,127}$");
    private static final int MAX_ARGS = 256;
    private static final Pattern SKILL = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$");
    private static final int MAX_SKILLS = 32;
    private static final int MAX_TALKS_WITH = 64;
    private static final Pattern TOOL = Pattern.compile("^[A-Za-z0-9_.:*-]{1,100}$");

    public AgentSpec {
        command = List.copyOf(command);
        env = Map.copyOf(env);
        skills = List.copyOf(skills);
        talksWith = List.copyOf(talksWith);
        if (skills.size() > MAX_SKILLS || skills.stream().anyMatch(s -> !SKILL.matcher(s).matches())
                || skills.stream().distinct().count() < skills.size()) {
            throw invalid("skills: at most " + MAX_SKILLS + " distinct skill ids (letters, digits, . _ -; 1 to 64)");
        }
        if (talksWith.size() > MAX_TALKS_WITH || talksWith.stream().distinct().count() < talksWith.size()
                || talksWith.contains(id)) {
            throw invalid("comms.allow: at most " + MAX_TALKS_WITH + " distinct nodes, not the agent itself");
        }
        if (command.isEmpty() || command.getFirst().isBlank()) {
            throw invalid("command: the program to run is required (a list: [program, arg, …])");
        }
        if (command.size() > MAX_ARGS) {
            throw invalid("command: at most " + MAX_ARGS + " arguments");
        }
        for (String name : env.keySet()) {
            if (!ENV_NAME.matcher(name).matches()) {
                throw invalid("env: " + name + " is not a variable name (letters, digits, _; not a digit first)");
            }
            if (name.startsWith("PARLEY_")) {
                throw invalid("env: " + name + ": names starting PARLEY_ are the hub's to set");
            }
        }
        requireWithin("idleTimeout", idleTimeout);
        requireWithin("timeout", timeout);
        if (maxMessagesPerPrompt < 1 || maxMessagesPerPrompt > PromptFormat.MAX_MESSAGES) {
            throw invalid("maxMessagesPerPrompt: 1 to " + PromptFormat.MAX_MESSAGES);
        }
        if (restart.isPresent() && runner != Runner.PROCESS) {
            throw invalid("restart: applies to runner: process only (runner: command starts one process per envelope)");
        }
    }

    /**
     * Whether a spec's entry names {@code tool}: a tool name, or a pattern in which {@code *}
     * stands for any run of characters ({@code mcp__github__*}); read alike by the blocklist and
     * the tool kinds.
     */
    public static boolean namesTool(String entry, String tool) {
        String regex = java.util.Arrays.stream(entry.split("\\*", -1)).map(Pattern::quote)
                .collect(java.util.stream.Collectors.joining(".*"));
        return tool.matches(regex);
    }

    /** The spec with the parent its node got (a node that starts an agent is its parent). */
    public AgentSpec withParent(Optional<NodeId> actual) {
        return new AgentSpec(id, actual, runner, command, env, workdir, wake, idleTimeout, timeout, limits, skills,
                talksWith, restart, toolBlocklist, toolKinds, gateway, maxMessagesPerPrompt);
    }

    /**
     * Tools the agent must not use. Every process the hub starts for the agent gets them in
     * {@link #VARIABLE}, the one place they are written and read: the names joined by commas
     * (which no name holds); absent when there are none.
     */
    public record ToolBlocklist(List<String> tools) {
        /** The environment variable that carries the blocklist to the agent's processes. */
        public static final String VARIABLE = "PARLEY_TOOL_BLOCKLIST";
        private static final int MAX_TOOLS = 64;

        public ToolBlocklist {
            tools = List.copyOf(tools);
            if (tools.size() > MAX_TOOLS) {
                throw invalid("toolBlocklist: at most " + MAX_TOOLS + " tools, not " + tools.size());
            }
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (String tool : tools) {
                requireToolName("toolBlocklist", tool);
                if (!seen.add(tool)) {
                    throw invalid("toolBlocklist: '" + tool + "' is named twice");
                }
            }
        }

        /**
         * Whether the list names {@code tool}: an entry is a tool name, or a pattern in which
         * {@code *} stands for any run of characters ({@code mcp__github__*}).
         */
        public boolean blocks(String tool) {
            return tools.stream().anyMatch(entry -> namesTool(entry, tool));
        }

        /** The value of {@link #VARIABLE} for the agent's processes; none when nothing is blocked. */
        public Optional<String> variable() {
            return tools.isEmpty() ? Optional.empty() : Optional.of(String.join(",", tools));
        }

        /** The tool names a value of {@link #VARIABLE} carries (none when it is absent or empty). */
        public static List<String> read(Optional<String> variable) {
            return variable.stream().flatMap(v -> java.util.Arrays.stream(v.split(","))).map(String::strip)
                    .filter(tool -> !tool.isEmpty()).distinct().toList();
        }
    }

    /**
     * The kinds the agent gives tools by name, over its adapter's table ({@code toolKinds: {Tool:
     * kind, …}} in the spec). A name may hold {@code *}, any run of characters, as in
     * {@code mcp__github__*}. Every process the hub starts for the agent gets them in
     * {@link #VARIABLE}, the one place they are written and read: {@code Tool=kind} pairs joined
     * by commas (which neither a tool name nor a kind holds); absent when there are none.
     */
    public record ToolKindOverrides(Map<String, ToolKind> kinds) {
        /** The environment variable that carries the overrides to the agent's processes. */
        public static final String VARIABLE = "PARLEY_TOOL_KINDS";
        public static final ToolKindOverrides NONE = new ToolKindOverrides(Map.of());
        private static final int MAX_TOOLS = 256;

        public ToolKindOverrides {
            kinds = Map.copyOf(kinds);
            if (kinds.size() > MAX_TOOLS) {
                throw invalid("toolKinds: at most " + MAX_TOOLS + " tools, not " + kinds.size());
            }
            kinds.keySet().forEach(tool -> requireToolName("toolKinds", tool));
        }

        /** The overrides as written, {@code Tool: kind}: each kind by its wire name ({@code read}, …). */
        public static ToolKindOverrides of(Map<String, String> written) {
            Map<String, ToolKind> kinds = new java.util.TreeMap<>();
            written.forEach((tool, kind) -> kinds.put(tool, ToolKind.parse(kind).orElseThrow(() -> invalid(
                    "toolKinds: " + tool + ": '" + kind + "' is not a tool kind (one of " + String.join(", ",
                            java.util.Arrays.stream(ToolKind.values()).map(ToolKind::wire).toList()) + ")"))));
            return new ToolKindOverrides(kinds);
        }

        /** The value of {@link #VARIABLE} for the agent's processes; none when there are no overrides. */
        public Optional<String> variable() {
            return kinds.isEmpty() ? Optional.empty() : Optional.of(String.join(",", new java.util.TreeMap<>(kinds)
                    .entrySet().stream().map(e -> e.getKey() + "=" + e.getValue().wire()).toList()));
        }

        /**
         * The overrides a value of {@link #VARIABLE} carries (none when it is absent or empty);
         * {@code invalid_spec} saying which pair when one does not read.
         */
        public static ToolKindOverrides read(Optional<String> variable) {
            Map<String, String> written = new java.util.LinkedHashMap<>();
            variable.stream().flatMap(v -> java.util.Arrays.stream(v.split(","))).map(String::strip)
                    .filter(pair -> !pair.isEmpty()).forEach(pair -> {
                        int eq = pair.indexOf('=');
                        if (eq < 0) {
                            throw invalid("toolKinds: '" + pair + "' is not Tool=kind");
                        }
                        written.put(pair.substring(0, eq).strip(), pair.substring(eq + 1).strip());
                    });
            return of(written);
        }
    }

    /** One rule for a tool's name wherever a spec names one. */
    private static void requireToolName(String field, String tool) {
        if (!TOOL.matcher(tool).matches()) {
            throw invalid(field + ": '" + tool + "' is not a tool name (1 to 100 letters, digits, _ . : - *)");
        }
    }

    /**
     * Resource limits on each command, set as rlimits before it starts: its address space, its
     * CPU time (past it the kernel ends it), its open files. Absent: the hub's own.
     */
    public record Limits(Optional<Long> memoryBytes, Optional<Duration> cpuTime, Optional<Integer> openFiles) {
        public static final Limits NONE = new Limits(Optional.empty(), Optional.empty(), Optional.empty());
        private static final long MIN_MEMORY = 16L << 20;

        public Limits {
            if (memoryBytes.isPresent() && (memoryBytes.get() < MIN_MEMORY || memoryBytes.get() > (1L << 50))) {
                throw invalid("limits.memory: at least 16M");
            }
            if (cpuTime.isPresent() && (cpuTime.get().toSeconds() < 1 || cpuTime.get().compareTo(MAX) > 0)) {
                throw invalid("limits.cpuTime: between 1s and 24h, in whole seconds");
            }
            if (openFiles.isPresent() && (openFiles.get() < 16 || openFiles.get() > 1_048_576)) {
                throw invalid("limits.openFiles: between 16 and 1048576");
            }
        }

        public boolean any() {
            return memoryBytes.isPresent() || cpuTime.isPresent() || openFiles.isPresent();
        }
    }

    /** Who runs the agent's work. */
    public enum Runner {
        /** The reference runner: one process per envelope, its text on stdin, stdout the reply. */
        COMMAND,
        /** A long-running process that speaks the agent protocol itself. */
        PROCESS;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** When the agent runs. */
    public enum Wake {
        /** From the start of the hub (or of the agent) until stopped. */
        ALWAYS,
        /** Only while an envelope waits for it, and its idle timeout after the last. */
        ON_MESSAGE;

        public String wire() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /**
     * What the hub does when a {@code runner: process} agent's process ends by itself (not by a
     * stop or an idle stop of the hub's). Absent from a spec: {@link #ALWAYS}.
     */
    public enum Restart {
        /** Started again, however it ended (a crash loop fails the agent). */
        ALWAYS,
        /** Started again only after a failure (a status other than 0, or a signal); status 0 ends it. */
        ON_FAILURE,
        /** Never started again by the hub: status 0 ends it, a failure fails the agent. */
        NEVER;

        public String wire() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** An environment variable's value: given in the spec, or read from a file when the agent starts (a secret). */
    public sealed interface EnvValue {
        record Text(String value) implements EnvValue {
        }

        record File(String path) implements EnvValue {
        }
    }

    private static void requireWithin(String field, Duration value) {
        if (value.compareTo(Duration.ofSeconds(1)) < 0 || value.compareTo(MAX) > 0) {
            throw invalid(field + ": between 1s and 24h");
        }
    }

    public static ParleyException invalid(String why) {
        return new ParleyException(ErrorCode.INVALID_SPEC, "invalid agent spec: " + why);
    }
}
