package dev.parley.trace;

import dev.parley.core.AgentSpec;
import dev.parley.core.ToolKind;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The registry of tool-name tables, one per adapter ({@code tool-kinds/ADAPTER.properties}
 * beside this class: {@code ToolName=kind}), and the one way a tool name becomes a
 * {@link ToolKind}: the agent's own overrides first, then its adapter's table, else
 * {@link ToolKind#OTHER}. A table naming a kind that does not exist stops the registry from
 * loading, so a typo cannot quietly make a tool "other".
 */
public final class ToolKinds {
    public static final String ECHO = "echo";
    public static final String COMMAND = "command";
    public static final String CLAUDE_CODE = "claude-code";
    /** Every adapter with a table. */
    public static final List<String> ADAPTERS = List.of(ECHO, COMMAND, CLAUDE_CODE);

    /** Where the tables are, beside this class. */
    static final String TABLES = "tool-kinds";
    private static final ToolKinds BUILT_IN = load(TABLES, ADAPTERS);

    private final Map<String, Map<String, ToolKind>> tables;

    private ToolKinds(Map<String, Map<String, ToolKind>> tables) {
        this.tables = Map.copyOf(tables);
    }

    public static ToolKinds builtIn() {
        return BUILT_IN;
    }

    /** Adapter → its table (tool name → kind). */
    public Map<String, Map<String, ToolKind>> tables() {
        return tables;
    }

    /**
     * The kind of {@code tool} as {@code adapter} names it, the agent's {@code overrides} first
     * (its {@code toolKinds}: a name, or a pattern where {@code *} is any run of characters; the
     * name before any pattern, the longer pattern before the shorter).
     */
    public ToolKind resolve(String adapter, Map<String, ToolKind> overrides, String tool) {
        ToolKind own = overrides.get(tool);
        if (own != null) {
            return own;
        }
        return overrides.entrySet().stream().filter(e -> e.getKey().contains("*")
                        && AgentSpec.namesTool(e.getKey(), tool))
                .max(Map.Entry.comparingByKey(java.util.Comparator.comparingInt(String::length)
                        .thenComparing(java.util.Comparator.reverseOrder())))
                .map(Map.Entry::getValue)
                .orElseGet(() -> tables.getOrDefault(adapter, Map.of()).getOrDefault(tool, ToolKind.OTHER));
    }

    /**
     * The tables of {@code adapters}, each {@code DIRECTORY/ADAPTER.properties} beside this class;
     * stops, naming the file, the tool and the kind, at a kind that does not exist.
     */
    static ToolKinds load(String directory, List<String> adapters) {
        Map<String, Map<String, ToolKind>> tables = new LinkedHashMap<>();
        for (String adapter : adapters) {
            String resource = directory + "/" + adapter + ".properties";
            try (InputStream in = ToolKinds.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException("no tool-kind table for adapter " + adapter + " (" + resource + ")");
                }
                Properties entries = new Properties();
                entries.load(in);
                Map<String, ToolKind> table = new TreeMap<>();
                for (String tool : entries.stringPropertyNames()) {
                    String kind = entries.getProperty(tool).strip();
                    table.put(tool, ToolKind.parse(kind).orElseThrow(() -> new IllegalStateException(
                            resource + ": " + tool + "=" + kind + " is not a tool kind")));
                }
                tables.put(adapter, Map.copyOf(table));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return new ToolKinds(tables);
    }
}
