package dev.parley.trace;

import dev.parley.core.AgentSpec;
import dev.parley.core.ToolKind;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The tool-kind tables hold: every registered adapter has one, every entry of every table names a
 * kind, no table sits on the classpath unregistered, a broken table stops loading saying where,
 * and an agent's overrides (as the hub hands them over in PARLEY_TOOL_KINDS) come first.
 */
class ToolKindsConformanceTest {
    private static final String DIRECTORY = "dev/parley/trace/" + ToolKinds.TABLES;

    @Test
    void everyRegisteredAdapterHasATable() {
        assertEquals(Set.copyOf(ToolKinds.ADAPTERS), ToolKinds.builtIn().tables().keySet());
        assertEquals(ToolKinds.ADAPTERS.size(), Set.copyOf(ToolKinds.ADAPTERS).size(), "each adapter once");
    }

    /** Read from the files themselves, not from the registry: each line resolves to the kind it names. */
    @Test
    void everyEntryOfEveryTableResolvesIntoTheEnum() throws IOException {
        int entries = 0;
        for (String adapter : ToolKinds.ADAPTERS) {
            Properties table = new Properties();
            try (InputStream in = ToolKinds.class.getResourceAsStream(ToolKinds.TABLES + "/" + adapter
                    + ".properties")) {
                table.load(in);
            }
            assertFalse(table.isEmpty(), adapter + ": an empty table");
            for (String tool : table.stringPropertyNames()) {
                ToolKind kind = ToolKind.parse(table.getProperty(tool).strip()).orElseThrow(() -> new AssertionError(
                        adapter + ": " + tool + "=" + table.getProperty(tool)));
                assertEquals(kind, ToolKinds.builtIn().resolve(adapter, Map.of(), tool), adapter + ": " + tool);
                entries++;
            }
        }
        assertEquals(entries, ToolKinds.builtIn().tables().values().stream().mapToInt(Map::size).sum());
        assertEquals(ToolKind.OTHER, ToolKinds.builtIn().resolve(ToolKinds.CLAUDE_CODE, Map.of(), "mcp__x__y"),
                "a tool no table names");
    }

    /** Every {@code *.properties} in the tables' directory, wherever on the classpath, is a registered adapter's. */
    @Test
    void noTableOnTheClasspathIsUnregistered() throws IOException, URISyntaxException {
        Set<String> found = new TreeSet<>();
        List<URL> directories = Collections.list(ToolKinds.class.getClassLoader().getResources(DIRECTORY));
        assertFalse(directories.isEmpty(), DIRECTORY + " is on the classpath");
        for (URL directory : directories) {
            assertEquals("file", directory.getProtocol(), "the tables are read from a directory here: " + directory);
            try (Stream<Path> files = Files.list(Path.of(directory.toURI()))) {
                files.map(f -> f.getFileName().toString()).forEach(name -> {
                    if (!name.endsWith(".properties")) {
                        throw new AssertionError(DIRECTORY + "/" + name + " is not a table (ADAPTER.properties)");
                    }
                    found.add(name.substring(0, name.length() - ".properties".length()));
                });
            }
        }
        Set<String> unregistered = new TreeSet<>(found);
        unregistered.removeAll(ToolKinds.ADAPTERS);
        assertEquals(Set.of(), unregistered, "tables on the classpath that ToolKinds.ADAPTERS does not name");
        assertEquals(new TreeSet<>(ToolKinds.ADAPTERS), found);
    }

    @Test
    void aTableNamingAKindThatDoesNotExistStopsLoadingSayingWhere() {
        IllegalStateException broken = assertThrows(IllegalStateException.class,
                () -> ToolKinds.load("broken-tool-kinds", List.of("broken")));
        assertEquals("broken-tool-kinds/broken.properties: Deploy=launch is not a tool kind", broken.getMessage());
        IllegalStateException missing = assertThrows(IllegalStateException.class,
                () -> ToolKinds.load(ToolKinds.TABLES, List.of("nobody")));
        assertEquals("no tool-kind table for adapter nobody (tool-kinds/nobody.properties)", missing.getMessage());
    }

    /**
     * An agent's toolKinds, as written to and read from PARLEY_TOOL_KINDS, come before its
     * adapter's table: a name before any pattern, a longer pattern before a shorter.
     */
    @Test
    void anAgentsOverridesComeFirstNameBeforePattern() {
        AgentSpec.ToolKindOverrides written = AgentSpec.ToolKindOverrides.of(Map.of("Bash", "read",
                "mcp__*", "fetch", "mcp__github__*", "edit", "mcp__github__search", "search"));
        Optional<String> variable = written.variable();
        assertEquals(Optional.of("Bash=read,mcp__*=fetch,mcp__github__*=edit,mcp__github__search=search"), variable);
        Map<String, ToolKind> overrides = AgentSpec.ToolKindOverrides.read(variable).kinds();
        assertEquals(written.kinds(), overrides);
        ToolKinds kinds = ToolKinds.builtIn();
        List<ToolKind> resolved = new ArrayList<>();
        for (String tool : List.of("Bash", "Read", "mcp__github__search", "mcp__github__create_issue", "mcp__slack__post",
                "Unknown")) {
            resolved.add(kinds.resolve(ToolKinds.CLAUDE_CODE, overrides, tool));
        }
        assertEquals(List.of(ToolKind.READ, ToolKind.READ, ToolKind.SEARCH, ToolKind.EDIT, ToolKind.FETCH,
                ToolKind.OTHER), resolved);
        assertEquals(Map.of(), AgentSpec.ToolKindOverrides.read(Optional.empty()).kinds());
        assertEquals(Optional.empty(), AgentSpec.ToolKindOverrides.NONE.variable());
    }
}
