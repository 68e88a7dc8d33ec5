package dev.parley.core;

/** Who is calling, as established from credentials (never from a request body). */
public sealed interface Principal {
    /** The operator holding the admin token. */
    record Admin() implements Principal {
        @Override
        public String name() {
            return "admin";
        }
    }

    /** A node acting as itself. */
    record Caller(NodeId id) implements Principal {
        @Override
        public String name() {
            return id.value();
        }
    }

    /** The name written to the audit log. */
    String name();
}
