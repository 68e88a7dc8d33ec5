package dev.parley.core;

import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;

/**
 * Managed agents as the graph and the audit log see them: starting one creates its node (kind
 * {@code managed}, the caller its parent, the depth policy applying) with its spec in one
 * transaction; the admin and the agent's parent may look at it, stop and restart it, each
 * audited. Running it is the runtime's.
 */
public final class Agents {
    private final Graph graph;
    private final Registry registry;
    private final AgentStore store;
    private final PolicyRules rules;
    private final InstantSource clock;

    public Agents(Graph graph, Registry registry, AgentStore store, PolicyRules rules, InstantSource clock) {
        this.graph = graph;
        this.registry = registry;
        this.store = store;
        this.rules = rules;
        this.clock = clock;
    }

    /** Creates the agent's node with its spec ({@code text}, as written); answers the spec with the parent its node got. */
    public AgentSpec start(Principal caller, AgentSpec spec, String text) {
        CreatedNode created = registry.create(caller, new NewNode(spec.id(), NodeKind.MANAGED, spec.parent(), Map.of()),
                (node, tokenHash, audit) -> store.createAgent(node, tokenHash, audit, text));
        return spec.withParent(created.node().parent());
    }

    /**
     * The agent {@code id}, for the admin and its parent. To anyone else, and for a node that
     * is no agent, it answers like an id that names nothing.
     */
    public NodeId visible(Principal caller, NodeId id) {
        Optional<Node> node = graph.node(id).filter(n -> n.kind() == NodeKind.MANAGED);
        boolean sees = node.isPresent() && switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller c -> node.get().parent().equals(Optional.of(c.id()));
        };
        if (!sees) {
            throw new ParleyException(ErrorCode.NODE_NOT_FOUND, "agent " + id + " does not exist");
        }
        return id;
    }

    /** Whether {@code caller} may see agent {@code id}. */
    public boolean sees(Principal caller, NodeId id) {
        try {
            visible(caller, id);
            return true;
        } catch (ParleyException e) {
            return false;
        }
    }

    /** The agent's spec as its creator wrote it (secrets in it only as file names). */
    public String spec(Principal caller, NodeId id) {
        visible(caller, id);
        return Optional.ofNullable(store.agents().get(id)).map(AgentStore.Stored::spec)
                .orElseThrow(() -> new ParleyException(ErrorCode.NODE_NOT_FOUND, "agent " + id + " does not exist"));
    }

    /** Records the agent stopped (it stays so across hub restarts) or, with {@code stop} false, restarted. */
    public void stop(Principal caller, NodeId id, boolean stop) {
        visible(caller, id);
        Actor actor = Actor.of(caller, stop ? "agent.stop" : "agent.restart", clock.instant());
        store.stopped(id, stop ? Optional.of(actor.at()) : Optional.empty(), actor.allow(id.value(),
                stop ? "stopped" : "restarted", Optional.empty(), rules.version(), Optional.empty()));
    }
}
