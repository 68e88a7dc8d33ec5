package dev.parley.core;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Delegation: a node hands a task to a node it may reach, or to a child the hub spawns for
 * it; the assignee moves the task through {@link TaskState}, the creator may cancel it, and
 * every move reaches the other party as an envelope committed with the move. An ephemeral
 * task's spawned assignee is deleted when the task ends.
 */
public final class Tasks {
    /** The kind of the envelope that hands a task to its assignee. */
    public static final String KIND = "task";
    /** The admin acts on spawned nodes that outlived their task; it is never a task's party. */
    private static final Principal HUB = new Principal.Admin();

    private final Graph graph;
    private final PostOffice office;
    private final Registry registry;
    private final TaskStore store;
    private final EventStore audit;
    private final TaskFormat format;
    private final InstantSource clock;
    private final IdGenerator ids;
    private final Provisioning provisioning;
    private final Routing routing;
    private final AccessPolicy policy;
    /** Told of each node deleted with the end of the task it was spawned for (its streams, the agent running it). */
    private final List<java.util.function.Consumer<NodeId>> retirements = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * {@code audit} records refusals that write nothing else; {@code provisioning} creates the
     * managed children that tasks spawned from a template go to; {@code routing} is the
     * capabilities tasks may be addressed to.
     */
    public Tasks(Graph graph, AccessPolicy policy, Registry registry, TaskStore store, EventStore audit,
                 TaskFormat format, InstantSource clock, IdGenerator ids, Provisioning provisioning, Routing routing) {
        this.provisioning = provisioning;
        this.routing = routing;
        this.policy = policy;
        this.graph = graph;
        this.office = new PostOffice(graph, policy, PayloadSchemas.NONE, ids);
        this.registry = registry;
        this.store = store;
        this.audit = audit;
        this.format = format;
        this.clock = clock;
        this.ids = ids;
    }

    /** Submits a task; the assignee receives a {@code task} envelope in the same transaction. */
    public CreatedTask create(Principal caller, NewTask request) {
        Node creator = caller.actingNode(graph, "create tasks");
        return switch (request.assignee()) {
            case NewTask.Assignee.Existing existing -> {
                // An assignee on another gateway gets a copy of the task there with the assignment (TaskCopy).
                Actor actor = Actor.of(caller, "task.create", clock.instant());
                Task task = submitted(actor, creator.id(), existing.id(), request);
                yield office.send(actor, creator, existing.id(), assignment(task, request), Optional.of("task " + task.id()),
                        audit, storing(task, Optional.empty()));
            }
            case NewTask.Assignee.Through through -> {
                Capability capability = routing.route(caller, through.capabilityId());
                Actor actor = Actor.of(caller, "task.create", clock.instant());
                Task task = submitted(actor, creator.id(), capability.owner(), request);
                try {
                    yield office.send(actor, creator, capability.owner(), assignment(task, request), Optional.of("task "
                            + task.id() + " through " + capability.id()), audit, storing(task,
                            Optional.of(capability.id())));
                } catch (ParleyException e) {
                    if (e.code() == ErrorCode.ACL_DENIED || e.code() == ErrorCode.NODE_NOT_FOUND) {
                        routing.missed(caller, capability.id(), creator.id() + " may not reach its owner "
                                + capability.owner() + " (" + e.code().wire() + ")");
                    }
                    throw e;
                }
            }
            case NewTask.Assignee.Spawned spawned -> {
                // Lineage and the depth policy are the registry's; the child reaches only its group.
                CreatedNode child = registry.create(caller, new NewNode(spawned.id(), spawned.kind(), Optional.empty(),
                        spawned.labels()));
                CreatedTask created = assignToChild(caller, creator, spawned.id(), request);
                yield created.duplicate() ? created : new CreatedTask(created.task(), Optional.of(child.token()), false);
            }
            case NewTask.Assignee.Provisioned provisioned -> {
                AgentSpec agent = provisioning.provision(caller, provisioned);
                CreatedTask created = assignToChild(caller, creator, provisioned.id(), request);
                yield created.duplicate() ? created : new CreatedTask(created.task(), Optional.empty(), false,
                        Optional.of(agent));
            }
        };
    }

    /**
     * Hands the task to {@code child}, just created for it. Whatever keeps the task from being
     * created, or a messageId that had already created one (answered with that task), deletes
     * the child again: there is no task for it to do.
     */
    private CreatedTask assignToChild(Principal caller, Node creator, NodeId child, NewTask request) {
        CreatedTask created;
        try {
            Actor actor = Actor.of(caller, "task.create", clock.instant());
            Task task = submitted(actor, creator.id(), child, request);
            created = office.answer(actor, child, assignment(task, request),
                    "task " + task.id() + " (spawned for the task)", storing(task, Optional.empty()));
        } catch (RuntimeException e) {
            try {
                retire(child);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        if (created.duplicate()) {
            retire(child); // the first request's task, with its own assignee, is the answer
        }
        return created;
    }

    /**
     * Applies {@code event}: accept, update, complete and fail are the assignee's, cancel is
     * the creator's. The other party receives the task as it now stands.
     */
    public Task apply(Principal caller, String taskId, TaskEvent event) {
        Task task = visible(caller, taskId);
        boolean byCreator = event instanceof TaskEvent.Cancel;
        NodeId actorId = byCreator ? task.creator() : task.assignee();
        if (!(caller instanceof Principal.Caller c) || !c.id().equals(actorId)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, byCreator
                    ? "only the creator of task " + taskId + " may cancel it"
                    : "only the assignee of task " + taskId + " may " + event.name() + " it");
        }
        if (event instanceof TaskEvent.Complete complete) {
            complete.artifacts().forEach(Tasks::requireAbsolute);
        }
        NodeId notified = byCreator ? task.assignee() : task.creator();
        Actor actor = Actor.of(caller, "task." + event.name(), clock.instant());
        Optional<TraceContext> conversation = store.conversation(taskId);
        Task changed = store.change(taskId, current -> {
            Task next = current.after(event, actor.at());
            Draft move = notice(next, event.envelopeKind(), format.view(next), notified,
                    "task " + next.id() + " " + next.state().wire() + ": " + next.title(), Optional.empty());
            Draft notice = conversation.map(move::following).orElse(move); // a task's moves continue its trace
            return office.answer(actor, notified, notice, "task " + next.id() + " " + current.state().wire() + " -> "
                    + next.state().wire(), (envelope, entry) -> new TaskStore.TaskChange(next, envelope, entry));
        });
        if (changed.recycled() && graph.node(changed.assignee()).isPresent()) {
            retire(changed.assignee());
        }
        routing.changed(changed);
        return changed;
    }

    /** Creates the managed agent a task spawned from a template goes to ({@link Agents#provision}). */
    @FunctionalInterface
    public interface Provisioning {
        /** Tasks that spawn from a template are refused. */
        Provisioning NONE = (caller, child) -> {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "this hub runs no agents to spawn from a template");
        };

        AgentSpec provision(Principal caller, NewTask.Assignee.Provisioned child);
    }

    /** Capabilities as tasks see them ({@link Capabilities}). */
    public interface Routing {
        /** No capabilities: a task addressed to one is refused. */
        Routing NONE = new Routing() {
            @Override
            public Capability route(Principal caller, String id) {
                throw new ParleyException(ErrorCode.CAPABILITY_NOT_FOUND, "capability " + id + " is not published");
            }

            @Override
            public void missed(Principal caller, String id, String why) {
            }

            @Override
            public void changed(Task task) {
            }
        };

        /** The published capability {@code id}, whose owner a task addressed to it goes to; a miss otherwise. */
        Capability route(Principal caller, String id);

        /** A task addressed to capability {@code id} that could not reach its owner ({@code why}). */
        void missed(Principal caller, String id, String why);

        /** After every change of a task. */
        void changed(Task task);
    }

    /**
     * Hands {@code published}'s delegation skill to each of its learners as a
     * {@code skill_distribution} task from the owner. Published by the admin, every learner gets
     * one (the admin acts hub-wide; audited as the admin's); published by a node, each goes
     * through the access decision from the owner like any task, and a learner the owner may not
     * reach gets none (the refusal audited) — nor one the publisher may not reach, when it is
     * the owner's parent — so publishing never carries a node's words past its reach. Each carries a messageId of the capability, its delegation version and the
     * learner, so publishing again creates only those not created before. Returns the tasks
     * created now.
     */
    public List<Task> distribute(Principal caller, Capabilities.Published published) {
        Capability capability = published.capability();
        Optional<Node> owner = graph.node(capability.owner());
        List<Task> created = new java.util.ArrayList<>();
        for (NodeId learner : published.learners()) {
            if (owner.isEmpty() || graph.node(learner).isEmpty()) {
                continue;
            }
            Actor actor = Actor.of(caller, "task.create", clock.instant());
            NewTask request = new NewTask(new NewTask.Assignee.Existing(learner), "skill_distribution "
                    + capability.id(), Optional.of(format.distribution(capability)), false, Optional.of(
                    "skill_distribution/" + capability.id() + "/" + capability.delegation().version() + "/" + learner));
            Task task = submitted(actor, capability.owner(), learner, request);
            String about = "task " + task.id() + " (skill_distribution of " + capability.id() + ")";
            CreatedTask stored;
            if (caller instanceof Principal.Admin) {
                stored = office.answer(actor, learner, assignment(task, request), about, storing(task, Optional.empty()));
            } else {
                Node publisher = caller.actingNode(graph, "publish capabilities");
                Draft draft = assignment(task, request);
                if (!publisher.id().equals(owner.get().id()) // the owner's parent: its words go only where it reaches too
                        && policy.decide(publisher, graph.node(learner).orElseThrow(), draft.facts(), actor.at())
                        instanceof AclDecision.Denied denied) {
                    audit.audit(actor.deny(learner.value(), denied));
                    continue;
                }
                try {
                    stored = office.send(actor, owner.get(), learner, draft, Optional.of(about), audit,
                            storing(task, Optional.empty()));
                } catch (ParleyException e) {
                    if (e.code() != ErrorCode.ACL_DENIED && e.code() != ErrorCode.INVALID_REQUEST) {
                        throw e;
                    }
                    continue; // beyond the owner's reach (refused and audited like any task), or its messageId taken
                }
            }
            if (!stored.duplicate()) {
                created.add(stored.task());
            }
        }
        return created;
    }

    /** The task, for its creator, its assignee or the admin. */
    public Task show(Principal caller, String taskId) {
        return visible(caller, taskId);
    }

    /** The admin lists any tasks; a node only those it created or is assigned. */
    public List<Task> list(Principal caller, TaskQuery query) {
        return store.tasks(switch (caller) {
            case Principal.Admin a -> query;
            case Principal.Caller c -> new TaskQuery(Optional.of(c.id()), query.assignee(), query.state(), query.limit());
        });
    }

    /** A new task, as submitted now. */
    private Task submitted(Actor actor, NodeId creator, NodeId assignee, NewTask request) {
        return Task.submitted(ids.next(), creator, assignee, request.title(), request.input(), request.ephemeral(),
                actor.at());
    }

    /**
     * The envelope that hands {@code task} over. It carries the creator's messageId, so the
     * store answers a repeated request with the first task.
     */
    private Draft assignment(Task task, NewTask request) {
        return notice(task, KIND, format.assignment(task), task.assignee(), task.title(), request.messageId());
    }

    /**
     * Stores {@code task} with its assignment (and the capability it came through); a repeated
     * messageId answers the task the first request created.
     */
    private PostOffice.Commit<CreatedTask> storing(Task task, Optional<String> capability) {
        return (assignment, audit) -> {
            Task stored = store.create(new TaskStore.TaskChange(task, assignment, audit, capability));
            return new CreatedTask(stored, Optional.empty(), !stored.id().equals(task.id()));
        };
    }

    /** An envelope about {@code task} to {@code to}, from the other party, correlated to the task. */
    private static Draft notice(Task task, String kind, JsonText data, NodeId to, String text,
                                Optional<String> messageId) {
        NodeId from = to.equals(task.assignee()) ? task.creator() : task.assignee();
        return Draft.by(Route.TASK, from, kind, new Payload(Optional.of(text), Optional.of(data), Optional.of(task.id()),
                Optional.empty(), messageId, Map.of()));
    }

    /** Calls {@code listener} with each node deleted because the task it was spawned for ended, whoever ended it. */
    public void onRetire(java.util.function.Consumer<NodeId> listener) {
        retirements.add(listener);
    }

    /**
     * Deletes the assignees of ended ephemeral tasks that are still there: a hub that stopped
     * between a task's end and its assignee's deletion left them. Run at the hub's start.
     */
    public void retireLeftovers(java.util.Collection<NodeId> candidates) {
        for (NodeId node : candidates) {
            boolean recycled = store.tasks(new TaskQuery(Optional.empty(), Optional.of(node), Optional.empty(), 10))
                    .stream().anyMatch(Task::recycled);
            if (recycled && graph.node(node).isPresent()) {
                retire(node);
            }
        }
    }

    private void retire(NodeId assignee) {
        try {
            registry.delete(HUB, assignee);
        } catch (ParleyException e) {
            if (e.code() != ErrorCode.NODE_NOT_FOUND) { // deleted meanwhile: nothing left to do
                throw e;
            }
        }
        retirements.forEach(listener -> listener.accept(assignee));
    }

    /**
     * The task, if {@code caller} is its creator, its assignee or the admin. To anyone else it
     * answers exactly like an id that names nothing, so that no one learns which tasks of
     * others exist; what a party may not do (the assignee canceling) is refused with 403.
     */
    private Task visible(Principal caller, String taskId) {
        Task task = store.task(taskId).orElseThrow(() -> notFound(taskId));
        boolean party = switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller c -> c.id().equals(task.creator()) || c.id().equals(task.assignee());
        };
        if (!party) {
            throw notFound(taskId);
        }
        return task;
    }

    /** The refusal for an id that names no task. */
    public static ParleyException notFound(String taskId) {
        return new ParleyException(ErrorCode.TASK_NOT_FOUND, "task " + taskId + " does not exist");
    }

    private static void requireAbsolute(TaskEvent.Artifact artifact) {
        if (!absolute(artifact)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "artifact uri must be an absolute URI: "
                    + artifact.uri());
        }
    }

    /** Whether an artifact is named by an absolute URI, as a task's results must be. */
    static boolean absolute(TaskEvent.Artifact artifact) {
        try {
            return new URI(artifact.uri()).isAbsolute();
        } catch (URISyntaxException e) {
            return false;
        }
    }
}
