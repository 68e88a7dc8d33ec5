package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Nodes, lineage, tokens and grants: who exists, who may create whom, who may see whom.
 * Every change is committed to the store first and mirrored into the {@link Graph} after.
 */
public final class Registry {
    static final String NODE_TOKEN_PREFIX = "pn_";

    private final Graph graph;
    private final Tokens tokens;
    private final EventStore store;
    private final PolicyRules rules;
    private final InstantSource clock;
    private final IdGenerator ids;
    private final int maxDepth;
    private final Federation federation;
    private final ReentrantLock[] creating = new ReentrantLock[64];

    public Registry(Graph graph, Tokens tokens, EventStore store, PolicyRules rules, InstantSource clock, IdGenerator ids,
                    int maxDepth) {
        this(graph, tokens, store, rules, clock, ids, maxDepth, Federation.NONE);
    }

    /** A registry whose nodes and grants are shared with the other gateways of {@code federation}. */
    public Registry(Graph graph, Tokens tokens, EventStore store, PolicyRules rules, InstantSource clock, IdGenerator ids,
                    int maxDepth, Federation federation) {
        if (maxDepth < 0) {
            throw new IllegalArgumentException("maxDepth must be >= 0");
        }
        this.graph = graph;
        this.tokens = tokens;
        this.store = store;
        this.rules = rules;
        this.clock = clock;
        this.ids = ids;
        this.maxDepth = maxDepth;
        this.federation = federation;
        for (int i = 0; i < creating.length; i++) {
            creating[i] = new ReentrantLock();
        }
    }

    public CreatedNode create(Principal caller, NewNode request) {
        return create(caller, request, store::createNode);
    }

    /** How a new node is committed: by itself, or in one transaction with other changes (an admission). */
    @FunctionalInterface
    public interface NodeCommit {
        void commit(Node node, String tokenHash, AuditEntry audit);
    }

    /**
     * {@link #create(Principal, NewNode)} with the store write left to {@code commit}, which
     * must write the node (and may refuse, writing nothing). The graph and the token are
     * updated only after it returns.
     */
    public CreatedNode create(Principal caller, NewNode request, NodeCommit commit) {
        // One create of an id at a time here: a federation's claim of an id this gateway claimed
        // before without committing it (a full disk) is taken over by the next create, never by two.
        ReentrantLock lock = creating[Math.floorMod(request.id().hashCode(), creating.length)];
        lock.lock();
        try {
            Node node = plan(caller, request);
            String token = Tokens.mint(NODE_TOKEN_PREFIX);
            String hash = Tokens.hash(token);
            federation.claim(node);
            commit.commit(node, hash, allow(caller, "node.create", node.id().value(), "created"));
            graph.put(node);
            tokens.bind(node.id(), hash);
            return new CreatedNode(node, token);
        } finally {
            lock.unlock();
        }
    }

    /** Every check of {@link #create} with nothing written: the node it would make now. */
    public Node plan(Principal caller, NewNode request) {
        Optional<NodeId> parentId = parentOf(caller, request.parent());
        Optional<Node> parent = parentId.map(id -> graph.node(id).orElseThrow(() -> notFound(id)));
        if (request.id().equals(NodeId.HUB)) {
            throw new ParleyException(ErrorCode.NODE_EXISTS, "node id " + NodeId.HUB + " is reserved for the hub");
        }
        if (Capability.addresses(request.id().value())) { // a task's "to" of this shape names a capability
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "node ids starting cap. are capability addresses");
        }
        if (request.id().value().startsWith(Chats.HUMAN_PREFIX) && !(caller instanceof Principal.Admin)) {
            // the hub names the people of chat rooms so: a node that took such an id could be bound to one
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "node ids starting " + Chats.HUMAN_PREFIX
                    + " are the hub's, for people in chat rooms");
        }
        if (graph.node(request.id()).isPresent() || graph.isRetired(request.id())) {
            throw new ParleyException(ErrorCode.NODE_EXISTS, "node " + request.id() + " already exists"
                    + (graph.isRetired(request.id()) ? " (deleted; ids are never reused)" : ""));
        }
        int depth = depthUnder(parentId, parent);
        return new Node(request.id(), request.kind(), parentId, request.labels(), depth, clock.instant());
    }

    /**
     * The lineage checks of {@link #create} for a node whose id is not known yet (an
     * unbound invite): the parent such a node would get.
     */
    public Optional<NodeId> planParent(Principal caller, Optional<NodeId> requested) {
        Optional<NodeId> parentId = parentOf(caller, requested);
        Optional<Node> parent = parentId.map(id -> graph.node(id).orElseThrow(() -> notFound(id)));
        depthUnder(parentId, parent);
        return parentId;
    }

    private static Optional<NodeId> parentOf(Principal caller, Optional<NodeId> requested) {
        return switch (caller) {
            case Principal.Admin a -> requested;
            case Principal.Caller c -> {
                if (requested.isPresent() && !requested.get().equals(c.id())) {
                    throw new ParleyException(ErrorCode.FORBIDDEN, "a node may only create children of itself");
                }
                yield Optional.of(c.id());
            }
        };
    }

    private int depthUnder(Optional<NodeId> parentId, Optional<Node> parent) {
        int depth = parent.map(p -> p.depth() + 1).orElse(0);
        if (depth > maxDepth) {
            throw new ParleyException(ErrorCode.DEPTH_LIMIT, "node " + parentId.orElseThrow()
                    + " may not have children: the depth policy allows lineage " + maxDepth + " level(s) deep");
        }
        return depth;
    }

    /** The node, if the caller may see it: admin sees all, a node sees its groups and grant peers. */
    public Node show(Principal caller, NodeId id) {
        Node node = graph.node(id).orElseThrow(() -> notFound(id));
        if (!visible(caller, node)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "node " + id + " is not visible to " + caller.name());
        }
        return node;
    }

    public List<Node> list(Principal caller) {
        return graph.nodes().stream().filter(n -> visible(caller, n)).toList();
    }

    /**
     * Deletes a node of this hub; on a gateway the deletion is first marked in the state room,
     * and every other gateway retires its mirror. A node another gateway owns is deleted there.
     */
    public void delete(Principal caller, NodeId id) {
        requireAdmin(caller, "delete nodes");
        Node node = graph.node(id).orElseThrow(() -> notFound(id));
        requireOwnNode(id, "delete it there");
        Instant now = clock.instant();
        federation.retire(node, now); // the state room first: out of reach, the answer is 503 and the node stays
        store.deleteNode(id, now, allow(caller, "node.delete", id.value(), "deleted"));
        tokens.revoke(id);
        graph.retire(id);
    }

    public String rotateToken(Principal caller, NodeId id) {
        graph.node(id).orElseThrow(() -> notFound(id));
        requireOwnNode(id, "its token is rotated there");
        if (caller instanceof Principal.Caller c && !c.id().equals(id)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "a node may only rotate its own token");
        }
        String token = Tokens.mint(NODE_TOKEN_PREFIX);
        String hash = Tokens.hash(token);
        store.replaceToken(id, hash, allow(caller, "token.rotate", id.value(), "rotated"));
        tokens.bind(id, hash);
        return token;
    }

    /**
     * Sets the gateways that take {@code id} over, in order, when its owner (this gateway) is
     * gone; an empty list leaves it to wait for this gateway. Admin only, on the owner.
     */
    public Routing route(Principal caller, NodeId id, List<String> fallbacks) {
        requireAdmin(caller, "set a node's fallback gateways");
        Node node = graph.node(id).orElseThrow(() -> notFound(id));
        requireOwnNode(id, "its fallbacks are set there");
        if (fallbacks.size() > Routing.MAX_FALLBACKS) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "a node has at most " + Routing.MAX_FALLBACKS
                    + " fallback gateways, not " + fallbacks.size());
        }
        Routing routing = federation.route(node, fallbacks);
        store.audit(allow(caller, "node.routing", id.value(), "fallback gateways " + routing.fallbacks()));
        return routing;
    }

    /** A node's routing as the state room has it, if the caller may see the node. */
    public Routing routing(Principal caller, NodeId id) {
        show(caller, id);
        return federation.routing(id).orElseThrow(() -> new ParleyException(ErrorCode.NOT_FOUND, federation.gateway()
                .isEmpty() ? "this hub is not a gateway: it runs without --gateway and --nats"
                : "node " + id + " has no entry in the federation's state room yet"));
    }

    public Grant grant(Principal caller, NewGrant request) {
        requireAdmin(caller, "create grants");
        graph.node(request.from()).orElseThrow(() -> notFound(request.from()));
        if (request.to() instanceof GrantTarget.Node target) {
            graph.node(target.id()).orElseThrow(() -> notFound(target.id()));
        }
        if (request.to().equals(new GrantTarget.Node(request.from()))) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "a grant needs two different nodes");
        }
        var now = clock.instant();
        if (request.expiresAt().isPresent() && !request.expiresAt().get().isAfter(now)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "expiresAt must be in the future");
        }
        Grant grant = new Grant(ids.next(), request.from(), request.to(), request.expiresAt(), request.note(), now);
        // The state room first: out of reach, the answer is 503 and nothing is granted anywhere.
        federation.share(grant);
        try {
            store.createGrant(grant, allow(caller, "grant.create", grant.from() + "->" + grant.to().wire(),
                    "grant " + grant.id()));
        } catch (RuntimeException e) {
            try {
                federation.withdraw(grant.id());
            } catch (RuntimeException also) {
                e.addSuppressed(also);
            }
            throw e;
        }
        graph.putGrant(grant);
        return grant;
    }

    public List<Grant> grants(Principal caller) {
        return graph.grants().stream().filter(g -> switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller c -> g.from().equals(c.id()) || g.to().equals(new GrantTarget.Node(c.id()));
        }).toList();
    }

    public void revokeGrant(Principal caller, String grantId) {
        requireAdmin(caller, "delete grants");
        Grant grant = graph.grant(grantId).orElseThrow(() -> new ParleyException(ErrorCode.GRANT_NOT_FOUND,
                "grant " + grantId + " does not exist"));
        // The state room first: out of reach, the answer is 503 and the grant stands everywhere.
        federation.withdraw(grantId);
        store.deleteGrant(grantId, allow(caller, "grant.delete", grant.from() + "->" + grant.to().wire(), "grant " + grantId));
        graph.removeGrant(grantId);
    }

    public List<NodeId> children(NodeId id) {
        return graph.children(id);
    }

    public List<NodeId> group(Node node) {
        return graph.groupOf(node);
    }

    /** The gateway that owns {@code id} (keeps its inbox); empty on a single-host hub. */
    public Optional<String> gateway(NodeId id) {
        return graph.owner(id).or(federation::gateway);
    }

    /** Whether {@code id} names a node that exists now. */
    public boolean exists(NodeId id) {
        return graph.node(id).isPresent();
    }

    /** Whether {@code id} names a node that exists now or existed before its deletion. */
    public boolean known(NodeId id) {
        return graph.node(id).isPresent() || graph.isRetired(id);
    }

    private boolean visible(Principal caller, Node node) {
        return switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller c -> c.id().equals(node.id())
                    || graph.node(c.id()).map(self -> self.sharesGroupWith(node)).orElse(false)
                    || graph.activeGrant(c.id(), node.id(), clock.instant()).isPresent()
                    || graph.activeGrant(node.id(), c.id(), clock.instant()).isPresent();
        };
    }

    private AuditEntry allow(Principal caller, String action, String target, String reason) {
        return new AuditEntry(clock.instant(), caller.name(), action, target, AuditEntry.Decision.ALLOW, reason,
                Optional.empty(), rules.version());
    }

    /** A node another gateway owns is that gateway's to delete or give a token. */
    private void requireOwnNode(NodeId id, String whatThen) {
        Optional<String> owner = graph.owner(id);
        if (owner.isPresent()) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "node " + id + " belongs to gateway " + owner.get() + ": "
                    + whatThen);
        }
    }

    static void requireAdmin(Principal caller, String what) {
        if (!(caller instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin token may " + what);
        }
    }

    static ParleyException notFound(NodeId id) {
        return new ParleyException(ErrorCode.NODE_NOT_FOUND, "node " + id + " does not exist");
    }
}
