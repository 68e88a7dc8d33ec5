package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Capability;
import dev.parley.core.CreatedTask;
import dev.parley.core.ErrorCode;
import dev.parley.core.NewTask;
import dev.parley.core.NodeId;
import dev.parley.core.NodeKind;
import dev.parley.core.Task;
import dev.parley.core.TaskEvent;
import dev.parley.core.TaskQuery;
import dev.parley.core.TaskState;
import dev.parley.core.Tasks;
import dev.parley.server.agents.AgentRuntime;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

import java.util.List;
import java.util.Optional;

/** {@code /v1/tasks}: delegate work, move it through its states, cancel it, look at it. */
public final class TaskRoutes {
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1000;
    /** What an artifact is taken to be when its producer does not say. */
    private static final String DEFAULT_MEDIA_TYPE = "application/octet-stream";
    /** Most nodes a spawned agent may be given to reach, as an agent spec's comms.allow. */
    private static final int MAX_CAPABILITIES = 64;

    private final Tasks tasks;
    private final AgentRuntime agents;
    private final Metrics metrics;

    public TaskRoutes(Tasks tasks, AgentRuntime agents, Metrics metrics) {
        this.tasks = tasks;
        this.agents = agents;
        this.metrics = metrics;
    }

    public void register(Routes routes) {
        routes.post("/v1/tasks", this::create)
                .get("/v1/tasks", this::list)
                .get("/v1/tasks/{tid}", this::show)
                .post("/v1/tasks/{tid}/events", this::event)
                .post("/v1/tasks/{tid}/cancel", this::cancel);
    }

    private void create(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        var to = body.string("to");
        var spawn = body.object("spawn");
        if (to.isPresent() == spawn.isPresent()) {
            throw Body.invalid("exactly one of 'to' and 'spawn' is required");
        }
        NewTask.Assignee assignee = to.<NewTask.Assignee>map(address -> Capability.addresses(address)
                        ? new NewTask.Assignee.Through(address) : new NewTask.Assignee.Existing(NodeId.of(address)))
                .orElseGet(() -> spawned(spawn.orElseThrow()));
        NewTask request = new NewTask(assignee, body.requiredString("title"), body.rawJson("input"),
                body.bool("ephemeral").orElse(assignee instanceof NewTask.Assignee.Provisioned), body.token("messageId"));
        CreatedTask created = metrics.refusalsCounted(() -> tasks.create(caller, request));
        created.agent().ifPresent(agent -> agents.adopt(agent, false, Optional.empty())); // its assignment waits for it
        ObjectNode out = Views.task(created.task());
        if (created.duplicate()) { // the same messageId again: the first answer, no second task
            out.put("duplicate", true);
            ex.json(200, out);
            return;
        }
        metrics.taskReached(created.task().state());
        created.assigneeToken().ifPresent(token -> out.put("assigneeToken", token));
        ex.json(201, out);
    }

    /**
     * {@code spawn}: a child the caller runs itself ({@code id, kind, labels}; its token in the
     * answer) or, with {@code template}, a managed agent the hub runs ({@code id, template,
     * capabilities}).
     */
    private static NewTask.Assignee spawned(Body child) {
        NodeId id = NodeId.of(child.requiredString("id"));
        Optional<String> template = child.string("template");
        List<NodeId> capabilities = child.strings("capabilities").stream().map(NodeId::of).toList();
        if (template.isEmpty()) {
            if (!capabilities.isEmpty()) {
                throw Body.invalid("spawn.capabilities go with spawn.template (a child the hub runs)");
            }
            return new NewTask.Assignee.Spawned(id, child.string("kind").map(NodeKind::parse)
                    .orElse(NodeKind.EXTERNAL), child.stringMap("labels"));
        }
        if (child.string("kind").isPresent() || !child.stringMap("labels").isEmpty()) {
            throw Body.invalid("spawn.kind and spawn.labels do not go with spawn.template: the child is a managed"
                    + " agent with its template's skills");
        }
        if (capabilities.size() > MAX_CAPABILITIES || capabilities.stream().distinct().count() < capabilities.size()) {
            throw Body.invalid("spawn.capabilities: at most " + MAX_CAPABILITIES + " distinct nodes");
        }
        return new NewTask.Assignee.Provisioned(id, NodeId.of(template.get()), capabilities);
    }

    private void list(Exchange ex) {
        var caller = ex.caller();
        TaskQuery query = new TaskQuery(Optional.empty(), ex.query("assignee").map(NodeId::of),
                ex.query("state").map(TaskState::parse),
                (int) ex.longQuery("limit", 1, MAX_LIMIT, ErrorCode.INVALID_REQUEST).orElse(DEFAULT_LIMIT));
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        tasks.list(caller, query).forEach(t -> items.add(Views.task(t)));
        ex.json(200, out);
    }

    private void show(Exchange ex) {
        var caller = ex.caller();
        ex.json(200, Views.task(tasks.show(caller, ex.path("tid"))));
    }

    private void event(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        TaskEvent event = switch (body.requiredString("type")) {
            case "accept" -> new TaskEvent.Accept(body.longValue("etaSeconds").map(TaskRoutes::eta));
            case "update" -> new TaskEvent.Update(body.rawJson("progress"));
            case "complete" -> new TaskEvent.Complete(body.rawJson("result"), artifacts(body));
            case "fail" -> new TaskEvent.Fail(body.string("reason").orElse(""));
            case "cancel" -> throw Body.invalid("the creator cancels with POST /v1/tasks/{id}/cancel");
            default -> throw Body.invalid("type must be accept, update, complete or fail");
        };
        answer(ex, tasks.apply(caller, ex.path("tid"), event));
    }

    private void cancel(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        answer(ex, tasks.apply(caller, ex.path("tid"), new TaskEvent.Cancel(body.string("reason").orElse(""))));
    }

    private void answer(Exchange ex, Task task) {
        metrics.taskReached(task.state());
        ex.json(200, Views.task(task));
    }

    private static List<TaskEvent.Artifact> artifacts(Body body) {
        return body.objects("artifacts").stream()
                .map(a -> new TaskEvent.Artifact(a.requiredString("uri"), a.string("mediaType").orElse(DEFAULT_MEDIA_TYPE)))
                .toList();
    }

    private static long eta(long seconds) {
        if (seconds < 0) {
            throw Body.invalid("etaSeconds must not be negative");
        }
        return seconds;
    }
}
