package dev.parley.core;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * What a tool does, whatever an adapter calls it: the one vocabulary traces, policy rules and
 * the console use. Every adapter's tool names resolve to one of these (see parley-trace's ToolKinds).
 */
public enum ToolKind {
    READ, EDIT, DELETE, MOVE, SEARCH, EXECUTE, THINK, FETCH, SWITCH_MODE, OTHER;

    /** The name on the wire: {@code read}, {@code switch_mode}, … */
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Optional<ToolKind> parse(String wire) {
        return Arrays.stream(values()).filter(k -> k.wire().equals(wire)).findFirst();
    }
}
