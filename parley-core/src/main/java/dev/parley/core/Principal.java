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

    /**
     * The node this caller acts as, for what only a node does (send, publish, delegate): the
     * admin token has no node, hence no inbox to be answered in ({@code forbidden}); a node
     * token whose node was deleted meanwhile has none either ({@code unauthorized}).
     *
     * @param what the operation, as the refusal names it ("send", "create tasks")
     */
    default Node actingNode(Graph graph, String what) {
        return switch (this) {
            case Admin a -> throw new ParleyException(ErrorCode.FORBIDDEN,
                    "the admin token cannot " + what + "; use the token of a node");
            case Caller c -> graph.node(c.id()).orElseThrow(() -> new ParleyException(
                    ErrorCode.UNAUTHORIZED, "the node of this token no longer exists"));
        };
    }
}
