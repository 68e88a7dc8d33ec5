package dev.parley.core;

import java.util.List;

/**
 * Agent specs as text: read (validated, errors naming the field), and a child's spec made from
 * a template's, which is how a delegating node gets a freshly provisioned child.
 */
public interface AgentSpecFormat {
    /** The spec {@code text} holds; {@code invalid_spec} saying which field and why when it holds none. */
    AgentSpec read(String text);

    /**
     * The text of a spec like {@code template} but for node {@code id}, a child of
     * {@code parent}, talking beyond its group with {@code talksWith} only.
     */
    String child(String template, NodeId id, NodeId parent, List<NodeId> talksWith);
}
