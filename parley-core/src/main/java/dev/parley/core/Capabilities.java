package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Capabilities (distributed-pipes §9): published by their owner (or its parent, or the
 * admin), listed in a catalog and the owner's card, routing the tasks addressed to them to
 * the owner, and reviewed when they misfire: a task over its ETA, a task that failed, a
 * result that breaks the contract, tasks that could not be routed again and again. Each
 * misfire raises a {@link SkillReview}, stored, audited and sent to the owner.
 */
public final class Capabilities implements Tasks.Routing {
    /** Routing misses of one capability within {@link #MISS_WINDOW} that raise a review. */
    public static final int MISSES = 3;
    public static final Duration MISS_WINDOW = Duration.ofMinutes(10);
    /** Most sample ids one review carries. */
    private static final int MAX_SAMPLES = 10;
    /** Most routed tasks one ETA review pass looks at. */
    private static final int PASS = 1000;

    private final Graph graph;
    private final CapabilityStore store;
    private final AgentStore agents;
    private final TaskStore tasks;
    private final Contracts contracts;
    private final Notices notices;
    private final Function<SkillReview, JsonText> format;
    private final EventStore audit;
    private final PolicyRules rules;
    private final InstantSource clock;
    private final IdGenerator ids;
    /** Recent routing misses per capability id: when, and the id each refusal was audited with. */
    private final Map<String, Deque<Miss>> misses = new ConcurrentHashMap<>();

    /** {@code format} is a review's JSON view (its notice's data); {@code audit} records refusals. */
    public Capabilities(Graph graph, CapabilityStore store, AgentStore agents, TaskStore tasks, Contracts contracts,
                        Notices notices, Function<SkillReview, JsonText> format, EventStore audit, PolicyRules rules,
                        InstantSource clock, IdGenerator ids) {
        this.graph = graph;
        this.store = store;
        this.agents = agents;
        this.tasks = tasks;
        this.contracts = contracts;
        this.notices = notices;
        this.format = format;
        this.audit = audit;
        this.rules = rules;
        this.clock = clock;
        this.ids = ids;
    }

    /** A capability just published, and the agents that are to learn its delegation skill. */
    public record Published(Capability capability, List<NodeId> learners) {
        public Published {
            learners = List.copyOf(learners);
        }
    }

    /**
     * Publishes {@code declared} (its {@code publishedAt} is now): a capability of another
     * owner that is published is refused ({@code capability_taken}); publishing one again
     * replaces its declaration. The learners are the other active agents: every managed agent
     * not stopped or failed, except the owner.
     */
    public Published publish(Principal caller, Capability declared) {
        Actor actor = Actor.of(caller, "capability.publish", clock.instant());
        Node owner = graph.node(declared.owner()).orElseThrow(() -> new ParleyException(ErrorCode.NODE_NOT_FOUND,
                "owner " + declared.owner() + " is not a node"));
        requireSteward(caller, owner.id(), actor, declared.id());
        Optional<CapabilityStore.Stored> before = store.capability(declared.id());
        if (before.isPresent() && before.get().published() && !before.get().capability().owner().equals(owner.id())) {
            throw new ParleyException(ErrorCode.CAPABILITY_TAKEN, declared.id() + " is published by "
                    + before.get().capability().owner() + "; it must be unpublished before another node publishes it");
        }
        // A node's contract runs on the hub for every result: no regular expressions of its choosing.
        declared.contract().ifPresent(schema -> contracts.requireUsable(schema, caller instanceof Principal.Admin));
        Capability capability = new Capability(declared.id(), owner.id(), declared.delegation(), declared.executor(),
                declared.contract(), declared.eta(), actor.at());
        store.publish(capability, actor.allow(capability.id(), "published for " + owner.id() + " (delegation "
                + capability.delegation().wire() + ", executor " + capability.executor().wire() + ")", Optional.empty(),
                rules.version(), Optional.empty()));
        misses.remove(capability.id());
        List<NodeId> learners = agents.agents().entrySet().stream()
                .filter(a -> a.getValue().stoppedAt().isEmpty() && a.getValue().failure().isEmpty())
                .map(Map.Entry::getKey).filter(id -> !id.equals(owner.id())).toList();
        return new Published(capability, learners);
    }

    /** Withdraws capability {@code id}: tasks addressed to it are refused from now on. */
    public void unpublish(Principal caller, String id) {
        Actor actor = Actor.of(caller, "capability.unpublish", clock.instant());
        Capability capability = published(id);
        requireSteward(caller, capability.owner(), actor, id);
        store.unpublish(id, actor.at(), actor.allow(id, "unpublished", Optional.empty(), rules.version(),
                Optional.empty()));
    }

    /** The catalog: every published capability, for any node. */
    public List<Capability> catalog() {
        return store.published();
    }

    /** The published capabilities {@code owner} offers, for its card. */
    public List<Capability> of(NodeId owner) {
        return store.published().stream().filter(c -> c.owner().equals(owner)).toList();
    }

    /** Capability {@code id} while it is published. */
    public Capability published(String id) {
        Capability.requireId(id);
        return store.capability(id).filter(CapabilityStore.Stored::published).map(CapabilityStore.Stored::capability)
                .orElseThrow(() -> notFound(id));
    }

    /**
     * The reviews of capability {@code id} that {@code caller} looks after: the admin all, a node
     * those of the owner it is or is the parent of (an earlier owner's stay theirs).
     */
    public List<SkillReview> reviews(Principal caller, String id, int limit) {
        Capability.requireId(id);
        CapabilityStore.Stored stored = store.capability(id).orElseThrow(() -> notFound(id));
        if (!steward(caller, stored.capability().owner())) {
            throw notFound(id); // to others, like a capability that does not exist
        }
        return store.reviews(id, limit).stream().filter(r -> steward(caller, r.owner())).toList();
    }

    /**
     * Where a task addressed to capability {@code id} goes: its owner, while it is published.
     * Otherwise a routing miss, counted against the capability ({@link #missed}) and refused.
     */
    @Override
    public Capability route(Principal caller, String id) {
        try {
            return published(id);
        } catch (ParleyException e) {
            missed(caller, id, "not published");
            throw e;
        }
    }

    /**
     * A task addressed to capability {@code id} that could not be routed ({@code why}): audited
     * with an id; the {@link #MISSES}th within {@link #MISS_WINDOW} raises a review, when the
     * capability was ever published (there is an owner to tell).
     */
    @Override
    public void missed(Principal caller, String id, String why) {
        Instant now = clock.instant();
        String sample = ids.next();
        audit.audit(Actor.of(caller, "capability.route", now).deny(id, "routing miss " + sample + ": " + why,
                rules.version()));
        Optional<CapabilityStore.Stored> stored = store.capability(id);
        if (stored.isEmpty()) {
            return;
        }
        List<String> samples;
        Deque<Miss> recent = misses.computeIfAbsent(id, k -> new ArrayDeque<>());
        synchronized (recent) {
            recent.addLast(new Miss(now, sample));
            while (!recent.isEmpty() && recent.peekFirst().at().isBefore(now.minus(MISS_WINDOW))) {
                recent.removeFirst();
            }
            if (recent.size() < MISSES) {
                return;
            }
            samples = recent.stream().map(Miss::sample).toList();
            recent.clear();
        }
        raise(stored.get().capability(), stored.get().capability().owner(), SkillReview.Failure.ROUTING_MISS, samples.size() + " tasks addressed to it"
                + " could not be routed within " + MISS_WINDOW.toMinutes() + " min (last: " + why + ")", samples,
                Optional.empty());
    }

    /** After a change of {@code task}: a failure, or a result that breaks the contract, of a routed task raises a review. */
    @Override
    public void changed(Task task) {
        Optional<CapabilityStore.Routed> routed = store.routed(task.id());
        if (routed.isEmpty()) {
            return;
        }
        Optional<Capability> through = store.capability(routed.get().capabilityId()).map(CapabilityStore.Stored::capability);
        if (through.isEmpty()) {
            return;
        }
        Capability capability = through.get();
        NodeId owner = routed.get().owner(); // the owner the task went to, whoever owns the capability now
        switch (task.state()) {
            case ACCEPTED -> task.etaSeconds().ifPresent(eta -> store.due(task.id(), task.createdAt().plusSeconds(eta)));
            case FAILED -> raise(capability, owner, SkillReview.Failure.TERMINAL_FAILURE, "task " + task.id()
                    + " failed: " + task.reason().orElse(""), List.of(task.id()), Optional.empty());
            case COMPLETED -> capability.contract().flatMap(contract -> contracts.breach(contract,
                    task.result().orElse(new JsonText("null")))).ifPresent(why -> raise(capability, owner,
                    SkillReview.Failure.CONTRACT_VIOLATION, "the result of task " + task.id() + " breaks the contract: "
                            + why, List.of(task.id()), Optional.empty()));
            default -> {
            }
        }
    }

    /**
     * Raises a review for each routed task not ended by its ETA (the assignee's accepted
     * {@code etaSeconds}, else the capability's, from the task's creation), once per task.
     * Returns how many it raised.
     */
    public int reviewOverdue() {
        Instant now = clock.instant();
        int raised = 0;
        for (CapabilityStore.Routed routed : store.overdue(now, PASS)) {
            Optional<Task> task = tasks.task(routed.taskId());
            Optional<Capability> capability = store.capability(routed.capabilityId()).map(CapabilityStore.Stored::capability);
            if (task.isEmpty() || capability.isEmpty() || task.get().state().terminal()) {
                continue;
            }
            raise(capability.get(), routed.owner(), SkillReview.Failure.ETA_BREACH, "task " + task.get().id() + " is "
                    + task.get().state().wire() + " past its ETA of " + DurationText.format(Duration.between(
                            task.get().createdAt(), routed.dueAt())), List.of(task.get().id()),
                    Optional.of(task.get().id()));
            raised++;
        }
        return raised;
    }

    private void raise(Capability capability, NodeId owner, SkillReview.Failure failure, String detail,
                       List<String> samples, Optional<String> overdue) {
        Instant now = clock.instant();
        SkillReview review = new SkillReview(ids.next(), capability.id(), owner, capability.delegation(),
                capability.executor(), failure, detail, samples.subList(0, Math.min(samples.size(), MAX_SAMPLES)), now);
        AuditEntry entry = new Actor("hub", "capability.review", now).allow(capability.id(), failure.wire() + ": "
                + detail, Optional.empty(), rules.version(), Optional.empty());
        store.raise(review, notices.skillReview(review, format.apply(review)), entry, overdue);
    }

    /** The admin, the owner and the owner's parent look after a capability. */
    private boolean steward(Principal caller, NodeId owner) {
        return switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller c -> c.id().equals(owner)
                    || graph.node(owner).flatMap(Node::parent).equals(Optional.of(c.id()));
        };
    }

    private void requireSteward(Principal caller, NodeId owner, Actor actor, String id) {
        if (!steward(caller, owner)) {
            audit.audit(actor.deny(id, "not the owner " + owner + ", its parent or the admin", rules.version()));
            throw new ParleyException(ErrorCode.FORBIDDEN, "only " + owner + ", its parent or the admin may "
                    + actor.action().substring("capability.".length()) + " " + id);
        }
    }

    private static ParleyException notFound(String id) {
        return new ParleyException(ErrorCode.CAPABILITY_NOT_FOUND, "capability " + id + " is not published");
    }

    private record Miss(Instant at, String sample) {
    }
}
