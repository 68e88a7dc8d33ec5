package dev.parley.core;

import java.util.Locale;

/** The rule that allowed an envelope to travel; recorded in {@code trace.route}. */
public enum Route {
    /** A node writing to its own inbox. */
    SELF,
    /** Parent and child, or siblings. */
    INTRA_GROUP,
    /** An unexpired explicit grant. */
    GRANT,
    /** The receiver of an envelope answering its sender. */
    REPLY;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Route parse(String wire) {
        return valueOf(wire.toUpperCase(Locale.ROOT));
    }
}
