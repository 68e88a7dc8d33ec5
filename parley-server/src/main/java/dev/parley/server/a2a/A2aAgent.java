package dev.parley.server.a2a;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.CreatedTask;
import dev.parley.core.ErrorCode;
import dev.parley.core.Graph;
import dev.parley.core.NewTask;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Payload;
import dev.parley.core.Principal;
import dev.parley.core.Router;
import dev.parley.core.SendRequest;
import dev.parley.core.Task;
import dev.parley.core.TaskEvent;
import dev.parley.core.TaskQuery;
import dev.parley.core.TaskState;
import dev.parley.core.TaskWebhook;
import dev.parley.core.Tasks;
import dev.parley.server.metrics.Metrics;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * What the A2A operations do to Parley, whatever binding or version carried them. The caller
 * C (from its bearer token) talks to the agent X named in the path:
 * <ul>
 * <li>a message without {@code taskId} submits a Parley task from C to X, through
 *     {@link Tasks} (same ACL, audit, durability), with the message as its input and the
 *     message's {@code messageId} as the idempotency key;</li>
 * <li>a message with {@code taskId} continues that task: a Parley send from C to X through
 *     the {@link Router}, correlated to the task ({@code corrId}) and threaded on its context;</li>
 * <li>get, list, cancel, subscribe and the push configs read or move the Parley task, which X
 *     moves with task events over any surface.</li>
 * </ul>
 * Tasks are visible at X's endpoint only when X is their assignee and C is their creator or
 * X itself; anything else is TaskNotFound, which reveals nothing.
 */
public final class A2aAgent {
    /** Longest a blocking SendMessage waits for the task to end before it answers with the task as it stands. */
    static final long MAX_BLOCK_MILLIS = 30_000;
    private static final int MAX_TITLE = 120;
    private static final int LIST_SCAN = 1000;

    /** Where a stream writes. */
    interface Sink {
        void send(String member, ObjectNode payload) throws IOException;

        void heartbeat() throws IOException;
    }

    private final Graph graph;
    private final Router router;
    private final Tasks tasks;
    private final A2aTaskWatch watch;
    private final A2aPushes pushes;
    private final Metrics metrics;
    private final long heartbeatMillis;

    public A2aAgent(Graph graph, Router router, Tasks tasks, A2aTaskWatch watch, A2aPushes pushes, Metrics metrics,
             long heartbeatMillis) {
        this.graph = graph;
        this.router = router;
        this.tasks = tasks;
        this.watch = watch;
        this.pushes = pushes;
        this.metrics = metrics;
        this.heartbeatMillis = heartbeatMillis;
    }

    /** The node behind an A2A endpoint. */
    Node agent(String id) {
        NodeId nodeId;
        try {
            nodeId = NodeId.of(id);
        } catch (ParleyException e) {
            throw notFound(id);
        }
        return graph.node(nodeId).orElseThrow(() -> notFound(id));
    }

    private static A2aError notFound(String id) {
        return new A2aError(A2aError.Kind.REFUSED, "no agent " + id + " on this hub", 404,
                Map.of("parleyError", ErrorCode.NODE_NOT_FOUND.wire()));
    }

    /** SendMessage: a new task, or a message on an existing one; returns the task as it stands after. */
    Task send(Principal.Caller caller, Node agent, A2aWire.Incoming message, Optional<A2aWire.PushConfig> push,
              A2aVersion version) {
        Task task;
        if (message.taskId().isPresent()) {
            Task current = visible(caller, agent, message.taskId().get());
            if (!current.creator().equals(caller.id())) {
                throw A2aError.taskNotFound(current.id());
            }
            if (current.state().terminal()) {
                throw new A2aError(A2aError.Kind.UNSUPPORTED_OPERATION, "task " + current.id() + " is "
                        + current.state().wire() + " and takes no more messages");
            }
            String context = A2aWire.contextId(current);
            if (message.contextId().isPresent() && !message.contextId().get().equals(context)) {
                throw A2aError.invalidParams("contextId " + message.contextId().get() + " is not the context of task "
                        + current.id() + " (" + context + ")");
            }
            ObjectNode content = A2aWire.content(message, context);
            content.put("taskId", current.id());
            metrics.send(() -> router.send(caller, new SendRequest(agent.id(), SendRequest.DEFAULT_KIND,
                    new Payload(A2aWire.text(content), Optional.of(A2aWire.jsonText(content)), Optional.of(current.id()),
                            Optional.of(context), Optional.of(message.messageId()), Map.of()),
                    Optional.empty(), Optional.empty())));
            task = tasks.show(caller, current.id());
        } else {
            String context = message.contextId().orElseGet(() -> UUID.randomUUID().toString());
            ObjectNode content = A2aWire.content(message, context);
            CreatedTask created = metrics.refusalsCounted(() -> tasks.create(caller, new NewTask(
                    new NewTask.Assignee.Existing(agent.id()), title(content, caller),
                    Optional.of(A2aWire.jsonText(content)), false, Optional.of(message.messageId()))));
            if (!created.duplicate()) {
                metrics.taskReached(created.task().state());
            }
            task = created.task();
            if (!task.assignee().equals(agent.id())) { // the same messageId once made a task for another agent
                throw A2aError.invalidParams("messageId " + message.messageId() + " was already used for task "
                        + task.id() + " of another agent");
            }
        }
        if (push.isPresent()) {
            pushes.create(caller.id(), task, push.get(), version);
        }
        return task;
    }

    private static String title(ObjectNode content, Principal.Caller caller) {
        String text = A2aWire.text(content).map(String::strip).orElse("");
        String first = text.lines().findFirst().orElse("").strip();
        if (first.isEmpty()) {
            return "A2A message from " + caller.id();
        }
        return first.length() > MAX_TITLE ? first.substring(0, MAX_TITLE - 1) + "…" : first;
    }

    /** Waits (at most {@code maxMillis}) for the task to end; the task as it then stands. */
    Task awaitEnd(Principal.Caller caller, Task task, long maxMillis) throws InterruptedException {
        if (task.state().terminal()) {
            return task;
        }
        try (A2aTaskWatch.Watcher watcher = watch.watch(task.id())) {
            Task current = tasks.show(caller, task.id());
            long deadline = System.nanoTime() + maxMillis * 1_000_000;
            while (!current.state().terminal()) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    break;
                }
                Optional<Task> next = watcher.next(left);
                if (next.isEmpty() && watcher.ended()) {
                    break; // the hub stops: the caller gets the task as it stands, and may follow it later
                }
                if (next.isPresent() && !next.get().updatedAt().isBefore(current.updatedAt())) {
                    current = next.get();
                }
            }
            return current;
        }
    }

    /** A task of this agent that the caller may see, or TaskNotFound. */
    Task visible(Principal.Caller caller, Node agent, String taskId) {
        Task task;
        try {
            task = tasks.show(caller, taskId);
        } catch (ParleyException e) {
            if (e.code() == ErrorCode.TASK_NOT_FOUND) {
                throw A2aError.taskNotFound(taskId);
            }
            throw e;
        }
        if (!task.assignee().equals(agent.id())) {
            throw A2aError.taskNotFound(taskId);
        }
        return task;
    }

    /** CancelTask: the creator cancels; canceling a canceled task answers it again. */
    Task cancel(Principal.Caller caller, Node agent, String taskId) {
        Task task = visible(caller, agent, taskId);
        if (task.state() == TaskState.CANCELED) {
            return task;
        }
        if (!task.creator().equals(caller.id())) {
            throw new A2aError(A2aError.Kind.TASK_NOT_CANCELABLE, "only the creator of task " + taskId
                    + " may cancel it; its assignee ends it with a fail event");
        }
        if (task.state().terminal()) {
            throw new A2aError(A2aError.Kind.TASK_NOT_CANCELABLE, "task " + taskId + " is already "
                    + task.state().wire());
        }
        Task canceled = tasks.apply(caller, taskId, new TaskEvent.Cancel("canceled by the A2A client"));
        metrics.taskReached(canceled.state());
        return canceled;
    }

    /** One page of ListTasks. */
    record Page(List<Task> tasks, String nextPageToken, int pageSize, int totalSize) {
    }

    /**
     * ListTasks: the caller's tasks at this agent, most recently updated first. The page
     * token is opaque (an offset into that order).
     */
    Page list(Principal.Caller caller, Node agent, Optional<String> contextId, Optional<List<TaskState>> states,
              Optional<Instant> updatedAfter, int pageSize, Optional<String> pageToken) {
        int offset = pageToken.map(A2aAgent::offset).orElse(0);
        List<Task> all = tasks.list(caller, new TaskQuery(Optional.empty(), Optional.of(agent.id()),
                        states.filter(s -> s.size() == 1).map(List::getFirst), LIST_SCAN)).stream()
                .filter(t -> states.map(s -> s.contains(t.state())).orElse(true))
                .filter(t -> contextId.map(c -> c.equals(A2aWire.contextId(t))).orElse(true))
                .filter(t -> updatedAfter.map(a -> !t.updatedAt().isBefore(a)).orElse(true))
                .sorted(Comparator.comparing(Task::updatedAt).reversed().thenComparing(Task::id, Comparator.reverseOrder()))
                .toList();
        int from = Math.min(offset, all.size());
        int to = Math.min(from + pageSize, all.size());
        String next = to < all.size() ? Base64.getUrlEncoder().withoutPadding()
                .encodeToString(("offset:" + to).getBytes(StandardCharsets.UTF_8)) : "";
        return new Page(all.subList(from, to), next, pageSize, all.size());
    }

    private static int offset(String token) {
        try {
            String decoded = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
            if (decoded.startsWith("offset:")) {
                int offset = Integer.parseInt(decoded.substring("offset:".length()));
                if (offset >= 0) {
                    return offset;
                }
            }
        } catch (IllegalArgumentException e) {
            // refused below
        }
        throw A2aError.invalidParams("pageToken is not a token this hub gave out");
    }

    /**
     * The task's updates as a stream: first the task as it stands, then each change in
     * order — the artifacts of a completion as artifact updates, every change as a status
     * update — until the task ends, or until the hub stops (an error then ends the stream, and
     * the client subscribes again). The watcher is opened before the snapshot is read.
     */
    void stream(Principal.Caller caller, Task task, A2aVersion version, Sink sink)
            throws IOException, InterruptedException {
        try (A2aTaskWatch.Watcher watcher = watch.watch(task.id())) {
            Task last = tasks.show(caller, task.id());
            sink.send("task", A2aWire.task(last, version, Optional.empty(), true));
            while (!last.state().terminal()) {
                Optional<Task> next = watcher.next(heartbeatMillis);
                if (next.isEmpty()) {
                    if (watcher.ended()) {
                        throw new A2aError(A2aError.Kind.INTERNAL, "the hub is shutting down: subscribe to task "
                                + task.id() + " again once it is back");
                    }
                    sink.heartbeat();
                    continue;
                }
                Task changed = next.get();
                if (!changed.updatedAt().isAfter(last.updatedAt()) && changed.state() == last.state()
                        && A2aWire.status(changed).equals(A2aWire.status(last))) {
                    continue; // already in the snapshot
                }
                if (changed.state() == TaskState.COMPLETED) {
                    for (ObjectNode artifact : A2aWire.artifacts(changed)) {
                        sink.send("artifactUpdate", A2aWire.artifactEvent(changed, artifact, version));
                    }
                }
                sink.send("statusUpdate", A2aWire.statusEvent(changed, version));
                last = changed;
            }
        }
    }

    /** CreateTaskPushNotificationConfig / tasks/pushNotificationConfig/set. */
    TaskWebhook setPush(Principal.Caller caller, Node agent, String taskId, A2aWire.PushConfig config,
                        A2aVersion version) {
        Task task = visible(caller, agent, taskId);
        return pushes.create(caller.id(), task, config, version);
    }

    TaskWebhook getPush(Principal.Caller caller, Node agent, String taskId, Optional<String> configId) {
        visible(caller, agent, taskId);
        Optional<TaskWebhook> found = configId.isPresent() ? pushes.get(taskId, configId.get())
                : pushes.list(taskId).stream().findFirst();
        return found.orElseThrow(() -> new A2aError(A2aError.Kind.TASK_NOT_FOUND, "task " + taskId
                + " has no push notification config" + configId.map(c -> " " + c).orElse(""), 404,
                Map.of("taskId", taskId)));
    }

    List<TaskWebhook> listPush(Principal.Caller caller, Node agent, String taskId) {
        visible(caller, agent, taskId);
        return pushes.list(taskId);
    }

    void deletePush(Principal.Caller caller, Node agent, String taskId, String configId) {
        visible(caller, agent, taskId);
        pushes.delete(caller.id(), taskId, configId);
    }
}
