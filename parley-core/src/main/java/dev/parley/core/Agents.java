package dev.parley.core;

import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;

/**
 * Managed agents as the graph and the audit log see them: starting one creates its node (kind
 * {@code managed}, under the parent its spec names, the depth policy applying) with its spec in
 * one transaction; the admin and the agent's parent may look at it, stop and restart it, each
 * audited. Only the admin starts agents: an agent's command runs on the hub's host, as the hub's
 * user, which no node's token may reach. Running it is the runtime's.
 */
public final class Agents {
    /** The node label an agent card reads its skills from (docs/a2a.md). */
    private static final String SKILLS_LABEL = "a2a.skills";
    /** The hub grants a spawned child its capabilities, as checked against its creator's reach. */
    private static final Principal HUB = new Principal.Admin();
    /** What a capability is checked as: an ordinary message from the creator to the node. */
    private static final RuleInput.EnvelopeFacts REACH = new RuleInput.EnvelopeFacts("message", 0, Map.of(), "");

    private final Graph graph;
    private final Registry registry;
    private final AgentStore store;
    private final EventStore audit;
    private final PolicyRules rules;
    private final AccessPolicy access;
    private final AgentSpecFormat format;
    /** This hub's gateway id, on a federation: the only one a spec's {@code gateway} may name here. */
    private final Optional<String> gateway;
    private final InstantSource clock;

    /** {@code audit} records refusals that write nothing else; {@code format} reads specs and makes children's. */
    public Agents(Graph graph, Registry registry, AgentStore store, EventStore audit, PolicyRules rules,
                  AccessPolicy access, AgentSpecFormat format, Optional<String> gateway, InstantSource clock) {
        this.gateway = gateway;
        this.access = access;
        this.format = format;
        this.graph = graph;
        this.registry = registry;
        this.store = store;
        this.audit = audit;
        this.rules = rules;
        this.clock = clock;
    }

    /**
     * Creates the agent's node with the spec {@code text} (kept as written); answers the spec as
     * its node has it. A caller who is not the admin is refused before the spec is read.
     */
    public AgentSpec start(Principal caller, String text) {
        if (!(caller instanceof Principal.Admin)) {
            audit.audit(Actor.of(caller, "agent.start", clock.instant()).deny("agent",
                    "only the admin starts agents", rules.version()));
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin starts agents: an agent's command runs"
                    + " on the hub's host as the hub's user");
        }
        AgentSpec spec = format.read(text);
        requireRunsHere(spec);
        for (NodeId other : spec.talksWith()) {
            if (graph.node(other).isEmpty()) {
                throw AgentSpec.invalid("comms.allow: " + other + " is not a node");
            }
        }
        AgentSpec created = create(caller, spec, text);
        for (NodeId other : spec.talksWith()) { // a grant each way, each audited as the admin's
            String note = "comms.allow of agent " + spec.id();
            registry.grant(caller, new NewGrant(spec.id(), new GrantTarget.Node(other), Optional.empty(), note));
            registry.grant(caller, new NewGrant(other, new GrantTarget.Node(spec.id()), Optional.empty(), note));
        }
        return created;
    }

    /**
     * Creates a managed child of {@code caller} for a task, with the spec of the agent the
     * request names as its template. The template must be an agent the caller is the parent
     * of: the admin chose its command and gave it to the caller's group, so a node never runs
     * a command of its own choosing. The child's reach is at most the caller's: it gets a grant
     * to each node of {@code talksWith} only when the caller may reach that node now.
     */
    public AgentSpec provision(Principal caller, NewTask.Assignee.Provisioned request) {
        Node parent = caller.actingNode(graph, "spawn agents");
        Node template = graph.node(request.template()).filter(n -> n.kind() == NodeKind.MANAGED
                && n.parent().equals(Optional.of(parent.id()))).orElseThrow(() -> new ParleyException(
                ErrorCode.NODE_NOT_FOUND, "spawn.template: " + request.template() + " is not an agent of "
                + parent.id() + " (a template is a managed agent whose parent is the task's creator)"));
        String text = store.agent(template.id()).map(AgentStore.Stored::spec).orElseThrow(() -> new ParleyException(
                ErrorCode.NODE_NOT_FOUND, "spawn.template: agent " + template.id() + " has no spec on this hub"));
        AccessPolicy.Check check = access.check(clock.instant());
        Map<NodeId, Optional<java.time.Instant>> reach = new java.util.LinkedHashMap<>();
        for (NodeId other : request.talksWith()) {
            Optional<AclDecision.Allowed> allowed = graph.node(other).map(node -> check.decide(parent, node, () -> REACH))
                    .filter(AclDecision.Allowed.class::isInstance).map(AclDecision.Allowed.class::cast);
            if (allowed.isEmpty()) { // a node that does not exist is refused in the same words: nothing learnt of the graph
                audit.audit(Actor.of(caller, "agent.spawn", clock.instant()).deny(request.id().value(),
                        "capability " + other + " beyond the creator's reach", check.policyVersion()));
                throw new ParleyException(ErrorCode.FORBIDDEN, "spawn.capabilities: " + parent.id()
                        + " may not reach " + other + ", so a child it spawns may not either");
            }
            // A reach that comes from a grant ends when that grant does: so does the child's.
            reach.put(other, Optional.ofNullable(allowed.get().grantId()).flatMap(graph::grant)
                    .flatMap(Grant::expiresAt));
        }
        String childText = format.child(text, request.id(), parent.id(), request.talksWith());
        AgentSpec created = create(caller, format.read(childText), childText);
        try {
            reach.forEach((other, expires) -> registry.grant(HUB, new NewGrant(request.id(), new GrantTarget.Node(other),
                    expires, "capability of agent " + request.id() + ", spawned by " + parent.id() + " from "
                    + template.id())));
        } catch (RuntimeException e) { // no child with half its reach: it goes, and the task is not created
            try {
                registry.delete(HUB, request.id());
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        return created;
    }

    /**
     * Refuses a spec whose {@code gateway} is not this hub's: an agent runs on the gateway that
     * owns its node, which is the one that starts it.
     */
    public void requireRunsHere(AgentSpec spec) {
        if (spec.gateway().isPresent() && !spec.gateway().equals(gateway)) {
            throw AgentSpec.invalid("gateway: this hub is " + gateway.map(g -> "gateway " + g)
                    .orElse("in no federation") + "; start agent " + spec.id() + " on gateway " + spec.gateway().get()
                    + " (an agent runs on the gateway that owns its node, the one it is started on)");
        }
    }

    /** The agent's node, with its spec, in one transaction: lineage and the depth policy are the registry's. */
    private AgentSpec create(Principal caller, AgentSpec spec, String text) {
        Map<String, String> labels = spec.skills().isEmpty() ? Map.of()
                : Map.of(SKILLS_LABEL, String.join(",", spec.skills()));
        CreatedNode created = registry.create(caller, new NewNode(spec.id(), NodeKind.MANAGED, spec.parent(), labels),
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

    /**
     * The tools node {@code id}'s spec blocks: none when it is not a managed agent. A stored
     * spec that no longer reads blocks everything, so a broken spec never widens what an agent may do.
     */
    public AgentSpec.ToolBlocklist toolBlocklist(NodeId id) {
        return managedSpec(id).map(spec -> spec.map(AgentSpec::toolBlocklist)
                        .orElseGet(() -> new AgentSpec.ToolBlocklist(java.util.List.of("*"))))
                .orElseGet(() -> new AgentSpec.ToolBlocklist(java.util.List.of()));
    }

    /** The kinds node {@code id}'s spec gives tools by name: none when it is not a managed agent or its spec no longer reads. */
    public AgentSpec.ToolKindOverrides toolKinds(NodeId id) {
        return managedSpec(id).flatMap(spec -> spec.map(AgentSpec::toolKinds)).orElse(AgentSpec.ToolKindOverrides.NONE);
    }

    /** Empty when {@code id} is no managed agent; else its spec, empty when the stored text no longer reads. */
    private Optional<Optional<AgentSpec>> managedSpec(NodeId id) {
        return store.agent(id).map(stored -> {
            try {
                return Optional.of(format.read(stored.spec()));
            } catch (ParleyException e) {
                return Optional.empty();
            }
        });
    }

    /** The agent's spec as its creator wrote it (secrets in it only as file names). */
    public String spec(Principal caller, NodeId id) {
        visible(caller, id);
        return store.agent(id).map(AgentStore.Stored::spec)
                .orElseThrow(() -> new ParleyException(ErrorCode.NODE_NOT_FOUND, "agent " + id + " does not exist"));
    }

    /** Records the agent stopped (it stays so across hub restarts) or, with {@code stop} false, restarted. */
    public void stop(Principal caller, NodeId id, boolean stop) {
        visible(caller, id);
        Actor actor = Actor.of(caller, stop ? "agent.stop" : "agent.restart", clock.instant());
        store.halted(id, stop ? Optional.of(actor.at()) : Optional.empty(), Optional.empty(), actor.allow(id.value(),
                stop ? "stopped" : "restarted", Optional.empty(), rules.version(), Optional.empty()));
    }

    /**
     * A fresh token for the agent's process ({@code runner: process}), issued each time it
     * starts, so a process from before holds none that works; audited {@code token.rotate}.
     */
    public String credential(NodeId id) {
        return registry.rotateToken(new Principal.Admin(), id);
    }

    /**
     * Records that the agent failed ({@code why}: its command cannot be started, its process
     * crash-looped or failed under {@code restart: never}): it stays failed, across hub restarts,
     * until restarted.
     */
    public void failed(NodeId id, String why) {
        haltedByHub(id, "agent.fail", false, why);
    }

    /**
     * Records the agent stopped by the hub, its process having ended as its restart policy
     * leaves it ({@code why}): as a stop by its parent, it lasts across hub restarts until restarted.
     */
    public void ended(NodeId id, String why) {
        haltedByHub(id, "agent.stop", true, why);
    }

    private void haltedByHub(NodeId id, String action, boolean stopped, String why) {
        Actor actor = new Actor("hub", action, clock.instant()); // no caller: the hub did it
        AuditEntry audit = actor.allow(id.value(), why, Optional.empty(), rules.version(), Optional.empty());
        if (stopped) {
            store.halted(id, Optional.of(actor.at()), Optional.empty(), audit);
        } else {
            store.halted(id, Optional.empty(), Optional.of(why), audit);
        }
    }
}
