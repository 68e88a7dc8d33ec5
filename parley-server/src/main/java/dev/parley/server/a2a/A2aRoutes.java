package dev.parley.server.a2a;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.Graph;
import dev.parley.core.Node;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Task;
import dev.parley.core.TaskState;
import dev.parley.core.TaskWebhook;
import dev.parley.core.TraceContext;
import dev.parley.mcp.JsonFailures;
import dev.parley.server.delivery.StreamCount;
import dev.parley.server.delivery.StreamWatchdog;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.http.StreamBody;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.wire.Json;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The A2A surface of every node (A2A specification v1.0, with v0.3 for clients that say
 * so or say nothing):
 * <ul>
 * <li>{@code GET /a2a/{node}/.well-known/agent-card.json} and {@code GET /.well-known/agent-card.json}, public;</li>
 * <li>JSON-RPC 2.0 at {@code POST /a2a/{node}} (section 9), methods by {@code A2A-Version};</li>
 * <li>HTTP+JSON (section 11, version 1.0): {@code POST /a2a/{node}/message:send},
 *     {@code /message:stream}, {@code GET /a2a/{node}/tasks}, {@code GET /a2a/{node}/tasks/{id}},
 *     {@code POST /a2a/{node}/tasks/{id}:cancel}, {@code POST|GET /a2a/{node}/tasks/{id}:subscribe},
 *     {@code /a2a/{node}/tasks/{id}/pushNotificationConfigs[/{configId}]},
 *     {@code GET /a2a/{node}/extendedAgentCard}.</li>
 * </ul>
 * Streams are Server-Sent Events: JSON-RPC response objects for JSON-RPC, StreamResponse
 * objects for HTTP+JSON. JSON-RPC errors answer HTTP 200 (500 for internal errors), except
 * a missing or unknown bearer (401), an unknown agent (404) and an oversized body (413).
 */
public final class A2aRoutes {
    private static final Logger LOG = Logger.getLogger(A2aRoutes.class.getName());
    private static final String JSONRPC = "application/json";
    private static final byte[] HEARTBEAT = ": hb\n\n".getBytes(StandardCharsets.UTF_8);
    private static final int DEFAULT_PAGE = 50;
    private static final int MAX_PAGE = 100;

    private static final Set<String> V1_METHODS = Set.of("SendMessage", "SendStreamingMessage", "GetTask", "ListTasks",
            "CancelTask", "SubscribeToTask", "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard");
    private static final Set<String> V03_METHODS = Set.of("message/send", "message/stream", "tasks/get",
            "tasks/cancel", "tasks/resubscribe", "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
            "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
            "agent/getAuthenticatedExtendedCard");
    /** The 0.3 methods whose clients read only an event stream, refusals included. */
    private static final Set<String> V03_STREAMS = Set.of("message/stream", "tasks/resubscribe");

    private final A2aAgent agent;
    private final A2aCards cards;
    private final Graph graph;
    private final String hubUrl;
    private final long heartbeatMillis;
    private final StreamWatchdog watchdog;
    private final Metrics metrics;
    private final StreamCount serving = new StreamCount();

    public A2aRoutes(A2aAgent agent, A2aCards cards, Graph graph, String hubUrl, long heartbeatMillis, StreamWatchdog watchdog,
              Metrics metrics) {
        this.agent = agent;
        this.cards = cards;
        this.graph = graph;
        this.hubUrl = hubUrl;
        this.heartbeatMillis = heartbeatMillis;
        this.watchdog = watchdog;
        this.metrics = metrics;
    }

    public void register(Routes routes) {
        routes.get("/.well-known/agent-card.json", this::hubCard)
                .get("/a2a/{node}/.well-known/agent-card.json", this::card)
                .post("/a2a/{node}", this::jsonRpc)
                .post("/a2a/{node}/message:send", ex -> rest(ex, this::restSend))
                .post("/a2a/{node}/message:stream", ex -> rest(ex, this::restStream))
                .get("/a2a/{node}/extendedAgentCard", ex -> rest(ex, (e, c, n) -> e.json(200,
                        cards.card(n, base(e), A2aVersion.V1_0))))
                .get("/a2a/{node}/tasks", ex -> rest(ex, this::restList))
                .get("/a2a/{node}/tasks/{task}", ex -> rest(ex, this::restTaskGet))
                .post("/a2a/{node}/tasks/{task}", ex -> rest(ex, this::restTaskPost))
                .get("/a2a/{node}/tasks/{task}/pushNotificationConfigs", ex -> rest(ex, this::restPushList))
                .post("/a2a/{node}/tasks/{task}/pushNotificationConfigs", ex -> rest(ex, this::restPushCreate))
                .get("/a2a/{node}/tasks/{task}/pushNotificationConfigs/{config}", ex -> rest(ex, this::restPushGet))
                .delete("/a2a/{node}/tasks/{task}/pushNotificationConfigs/{config}", ex -> rest(ex, this::restPushDelete));
    }

    // ------------------------------------------------------------------ agent cards

    private void hubCard(Exchange ex) {
        try {
            cardAnswer(ex, cards.hubCard(base(ex), version(ex)), "public");
        } catch (A2aError e) {
            restError(ex, e);
        }
    }

    /** A node's card needs a token (any node's, or the admin's): without one, no one learns which nodes exist. */
    private void card(Exchange ex) {
        try {
            A2aVersion version = version(ex);
            authenticated(ex);
            cardAnswer(ex, cards.card(agent.agent(ex.path("node")), base(ex), version), "private");
        } catch (A2aError e) {
            restError(ex, e);
        }
    }

    private static void cardAnswer(Exchange ex, ObjectNode card, String cacheScope) {
        ex.answerHeader("Cache-Control", cacheScope + ", max-age=60");
        ex.answerHeader("Vary", A2aVersion.HEADER + ", Authorization");
        ex.json(200, card);
    }

    /** The hub's address as the client reached it. */
    private String base(Exchange ex) {
        return ex.header("Host").filter(h -> h.matches("[A-Za-z0-9.:\\[\\]-]+")).map(h -> "http://" + h).orElse(hubUrl);
    }

    private static A2aVersion version(Exchange ex) {
        return A2aVersion.of(ex.header(A2aVersion.HEADER).or(() -> ex.query(A2aVersion.HEADER)));
    }

    /**
     * The principal of the bearer token, or 401. Checked before the agent of the path is looked
     * up, so that without a valid token an agent that exists answers like one that does not.
     */
    private static Principal authenticated(Exchange ex) {
        Optional<Principal> principal = ex.optionalCaller();
        if (principal.isEmpty()) {
            ex.answerHeader("WWW-Authenticate", "Bearer realm=\"parley\"");
            throw new A2aError(A2aError.Kind.REFUSED, ex.header("Authorization").isPresent()
                    ? "the bearer token is not valid (unknown, rotated or of a deleted node)"
                    : "missing Authorization: Bearer <node token>", 401,
                    Map.of("parleyError", ErrorCode.UNAUTHORIZED.wire()));
        }
        return principal.get();
    }

    /** The node the bearer token acts as; the admin token has none (403), a deleted node's token neither (401). */
    private Principal.Caller caller(Exchange ex) {
        Principal principal = authenticated(ex);
        try {
            return new Principal.Caller(principal.actingNode(graph, "speak over A2A").id());
        } catch (ParleyException e) {
            throw A2aError.from(e);
        }
    }

    // ------------------------------------------------------------------ JSON-RPC

    private void jsonRpc(Exchange ex) {
        JsonNode id = NullNode.getInstance();
        A2aVersion shape = A2aVersion.V0_3;
        boolean streamed = false; // a 0.3 streaming method: its refusals are answered as a stream too
        try {
            Optional<A2aVersion> version = Optional.empty();
            A2aError versionError = null;
            try {
                version = Optional.of(version(ex));
                shape = version.get();
            } catch (A2aError e) {
                versionError = e;
            }
            JsonNode tree;
            try {
                tree = Json.MAPPER.readTree(ex.rawBody());
            } catch (IOException | RuntimeException e) {
                throw unreadable(e);
            }
            if (tree == null || tree.isMissingNode()) {
                throw new A2aError(A2aError.Kind.INVALID_REQUEST, "the body is empty: send one JSON-RPC 2.0 request");
            }
            if (tree.isArray()) {
                throw new A2aError(A2aError.Kind.INVALID_REQUEST,
                        "batch requests are not supported: send one JSON-RPC request per call");
            }
            if (!(tree instanceof ObjectNode request)) {
                throw new A2aError(A2aError.Kind.INVALID_REQUEST, "a JSON-RPC request is a JSON object");
            }
            JsonNode rawId = request.get("id");
            if (rawId != null && (rawId.isTextual() || rawId.isIntegralNumber() || rawId.isNull())) {
                id = rawId;
            }
            if (!"2.0".equals(request.path("jsonrpc").asText(null))) {
                throw new A2aError(A2aError.Kind.INVALID_REQUEST, "jsonrpc must be \"2.0\"");
            }
            if (rawId == null) {
                throw new A2aError(A2aError.Kind.INVALID_REQUEST, "id is required: notifications are not supported");
            }
            if (!(rawId.isTextual() || rawId.isIntegralNumber() || rawId.isNull())) {
                throw new A2aError(A2aError.Kind.INVALID_REQUEST, "id must be a string, an integer or null");
            }
            if (!request.path("method").isTextual()) {
                throw new A2aError(A2aError.Kind.INVALID_REQUEST, "method must be a string");
            }
            if (versionError != null) {
                throw versionError;
            }
            String method = request.get("method").textValue();
            streamed = version.orElseThrow() == A2aVersion.V0_3 && V03_STREAMS.contains(method);
            JsonNode params = request.get("params");
            if (params != null && !params.isNull() && !params.isObject()) {
                throw A2aError.invalidParams("params must be an object");
            }
            ObjectNode p = params instanceof ObjectNode o ? o : Json.object();
            Principal.Caller caller = caller(ex);
            Node node = agent.agent(ex.path("node"));
            dispatch(ex, id, version.orElseThrow(), method, p, caller, node);
        } catch (A2aError e) {
            rpcError(ex, id, e, shape, streamed);
        } catch (ParleyException e) {
            rpcError(ex, id, A2aError.from(e), shape, streamed);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            rpcError(ex, id, new A2aError(A2aError.Kind.INTERNAL, "the hub is shutting down"), shape, streamed);
        } catch (RuntimeException e) {
            LOG.log(Level.SEVERE, "A2A JSON-RPC request failed", e);
            rpcError(ex, id, new A2aError(A2aError.Kind.INTERNAL, "internal error; the hub log has the details"), shape,
                    streamed);
        }
    }

    private void dispatch(Exchange ex, JsonNode id, A2aVersion v, String method, ObjectNode p,
                          Principal.Caller caller, Node node) throws InterruptedException {
        boolean v1 = v == A2aVersion.V1_0;
        if (!(v1 ? V1_METHODS : V03_METHODS).contains(method)) {
            String hint = (v1 ? V03_METHODS : V1_METHODS).contains(method)
                    ? "; it is an A2A " + (v1 ? "0.3" : "1.0") + " method: send the header A2A-Version: " + (v1 ? "0.3" : "1.0")
                    : "";
            throw new A2aError(A2aError.Kind.METHOD_NOT_FOUND, "method " + method + " does not exist in A2A "
                    + v.wire + hint);
        }
        switch (method) {
            case "SendMessage", "message/send" -> {
                Task task = send(p, caller, node, v, true);
                rpcResult(ex, id, v1 ? A2aWire.streamItem("task", A2aWire.task(task, v, historyLength(p), true), v)
                        : A2aWire.task(task, v, historyLength(p), true));
            }
            case "SendStreamingMessage", "message/stream" -> {
                Task task = send(p, caller, node, v, false);
                rpcStream(ex, id, caller, task, v);
            }
            case "GetTask", "tasks/get" -> rpcResult(ex, id, A2aWire.task(agent.visible(caller, node, required(p, "id")),
                    v, optionalInt(p, "historyLength", 0, Integer.MAX_VALUE), true));
            case "ListTasks" -> rpcResult(ex, id, list(caller, node, p.path("contextId").isTextual()
                            ? Optional.of(p.get("contextId").textValue()).filter(s -> !s.isEmpty()) : Optional.empty(),
                    optionalEnum(p, "status"), optionalText(p, "statusTimestampAfter"),
                    optionalInt(p, "pageSize", 1, MAX_PAGE), optionalText(p, "pageToken"),
                    optionalInt(p, "historyLength", 0, Integer.MAX_VALUE), optionalBool(p, "includeArtifacts")));
            case "CancelTask", "tasks/cancel" -> rpcResult(ex, id, A2aWire.task(agent.cancel(caller, node,
                    required(p, "id")), v, Optional.empty(), true));
            case "SubscribeToTask", "tasks/resubscribe" -> {
                Task task = agent.visible(caller, node, required(p, "id"));
                if (task.state().terminal()) {
                    throw terminal(task);
                }
                rpcStream(ex, id, caller, task, v);
            }
            case "CreateTaskPushNotificationConfig" -> rpcResult(ex, id, A2aWire.pushConfig(agent.setPush(caller, node,
                    required(p, "taskId"), A2aWire.pushConfig(p, v, "params"), v), v));
            case "tasks/pushNotificationConfig/set" -> rpcResult(ex, id, A2aWire.pushConfig(agent.setPush(caller, node,
                    required(p, "taskId"), A2aWire.pushConfig(p.get("pushNotificationConfig"), v,
                            "params.pushNotificationConfig"), v), v));
            case "GetTaskPushNotificationConfig" -> rpcResult(ex, id, A2aWire.pushConfig(agent.getPush(caller, node,
                    required(p, "taskId"), Optional.of(required(p, "id"))), v));
            case "tasks/pushNotificationConfig/get" -> rpcResult(ex, id, A2aWire.pushConfig(agent.getPush(caller, node,
                    required(p, "id"), optionalText(p, "pushNotificationConfigId")), v));
            case "ListTaskPushNotificationConfigs" -> {
                ObjectNode out = Json.object();
                ArrayNode configs = out.putArray("configs");
                agent.listPush(caller, node, required(p, "taskId")).forEach(w -> configs.add(A2aWire.pushConfig(w, v)));
                out.put("nextPageToken", "");
                rpcResult(ex, id, out);
            }
            case "tasks/pushNotificationConfig/list" -> {
                ArrayNode configs = Json.array();
                agent.listPush(caller, node, required(p, "id")).forEach(w -> configs.add(A2aWire.pushConfig(w, v)));
                rpcResult(ex, id, configs);
            }
            case "DeleteTaskPushNotificationConfig" -> {
                agent.deletePush(caller, node, required(p, "taskId"), required(p, "id"));
                rpcResult(ex, id, Json.object());
            }
            case "tasks/pushNotificationConfig/delete" -> {
                agent.deletePush(caller, node, required(p, "id"), required(p, "pushNotificationConfigId"));
                rpcResult(ex, id, NullNode.getInstance());
            }
            case "GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard" ->
                    rpcResult(ex, id, cards.card(node, base(ex), v));
            default -> throw new A2aError(A2aError.Kind.METHOD_NOT_FOUND, "method " + method + " does not exist");
        }
    }

    /** SendMessage in either version; {@code mayBlock}: wait for the end unless the request says not to. */
    private Task send(ObjectNode p, Principal.Caller caller, Node node, A2aVersion v, boolean mayBlock)
            throws InterruptedException {
        A2aWire.Incoming message = A2aWire.message(p.get("message"), v);
        JsonNode configuration = p.get("configuration");
        if (configuration != null && !configuration.isNull() && !configuration.isObject()) {
            throw A2aError.invalidParams("configuration must be an object");
        }
        Optional<A2aWire.PushConfig> push = Optional.empty();
        boolean blocking = false;
        if (configuration instanceof ObjectNode c) {
            String field = v == A2aVersion.V1_0 ? "taskPushNotificationConfig" : "pushNotificationConfig";
            if (c.hasNonNull(field)) {
                push = Optional.of(A2aWire.pushConfig(c.get(field), v, "configuration." + field));
            }
            optionalInt(c, "historyLength", 0, Integer.MAX_VALUE);
            blocking = v == A2aVersion.V1_0 ? !optionalBool(c, "returnImmediately").orElse(false)
                    : optionalBool(c, "blocking").orElse(false);
        } else {
            blocking = v == A2aVersion.V1_0; // 1.0: blocking unless returnImmediately says otherwise
        }
        Task task;
        // a traceparent in the message's metadata names the caller's span, as the HTTP header does
        try (var traced = TraceContext.enter(A2aWire.traceparent(message).or(TraceContext::incoming))) {
            task = agent.send(caller, node, message, push, v);
        }
        return mayBlock && blocking ? agent.awaitEnd(caller, task, A2aAgent.MAX_BLOCK_MILLIS) : task;
    }

    private ObjectNode list(Principal.Caller caller, Node node, Optional<String> contextId, Optional<String> status,
                            Optional<String> updatedAfter, Optional<Integer> pageSize, Optional<String> pageToken,
                            Optional<Integer> historyLength, Optional<Boolean> includeArtifacts) {
        Optional<List<TaskState>> states = status.map(A2aWire::parleyStates);
        Optional<Instant> after;
        try {
            after = updatedAfter.map(Instant::parse);
        } catch (DateTimeParseException e) {
            throw A2aError.invalidParams("statusTimestampAfter must be an ISO 8601 UTC time such as 2026-01-01T00:00:00Z");
        }
        A2aAgent.Page page = agent.list(caller, node, contextId, states, after, pageSize.orElse(DEFAULT_PAGE), pageToken);
        ObjectNode out = Json.object();
        ArrayNode tasks = out.putArray("tasks");
        page.tasks().forEach(t -> tasks.add(A2aWire.task(t, A2aVersion.V1_0, historyLength,
                includeArtifacts.orElse(false))));
        out.put("nextPageToken", page.nextPageToken());
        out.put("pageSize", page.pageSize());
        out.put("totalSize", page.totalSize());
        return out;
    }

    private static A2aError terminal(Task task) {
        return new A2aError(A2aError.Kind.UNSUPPORTED_OPERATION, "task " + task.id() + " is already "
                + task.state().wire() + ": there is nothing left to subscribe to");
    }

    private void rpcResult(Exchange ex, JsonNode id, JsonNode result) {
        ObjectNode out = Json.object();
        out.put("jsonrpc", "2.0");
        out.set("id", id);
        out.set("result", result);
        send(ex, 200, JSONRPC, Json.bytes(out));
    }

    private static ObjectNode rpcErrorBody(JsonNode id, A2aError e, A2aVersion shape) {
        ObjectNode out = Json.object();
        out.put("jsonrpc", "2.0");
        out.set("id", id);
        ObjectNode error = out.putObject("error");
        error.put("code", e.kind.code);
        error.put("message", e.getMessage() == null ? e.kind.title : e.getMessage());
        if (shape == A2aVersion.V1_0) {
            if (e.kind.a2aSpecific() || e.kind == A2aError.Kind.REFUSED || !e.metadata.isEmpty()) {
                error.putArray("data").add(errorInfo(e));
            }
        } else if (!e.metadata.isEmpty() || e.kind.a2aSpecific()) {
            ObjectNode data = error.putObject("data");
            data.put("reason", reason(e));
            e.metadata.forEach(data::put);
        }
        return out;
    }

    /**
     * A JSON-RPC error: HTTP 200 JSON, or for the HTTP-level refusals their status. A refused
     * 0.3 streaming call ({@code streamed}) that would answer 200 answers as the 0.3 reference
     * servers do (a2a-python and a2a-js 0.3): an event stream whose one event is the error,
     * since 0.3 clients of those methods read nothing else. 1.0 streaming calls refused before
     * their first event stay plain JSON, as the 1.0 reference servers answer them.
     */
    private void rpcError(Exchange ex, JsonNode id, A2aError e, A2aVersion shape, boolean streamed) {
        boolean httpLevel = e.httpStatus == 401 || e.httpStatus == 413
                || (e.kind == A2aError.Kind.REFUSED && e.httpStatus == 404); // no token, too large, no such agent
        int status = httpLevel ? e.httpStatus : e.kind == A2aError.Kind.INTERNAL ? 500 : 200;
        if (streamed && status == 200) {
            ex.answerHeader("Cache-Control", "no-cache");
            send(ex, 200, Exchange.EVENT_STREAM, errorEvent(rpcErrorBody(id, e, shape)));
            return;
        }
        send(ex, status, JSONRPC, Json.bytes(rpcErrorBody(id, e, shape)));
    }

    private void rpcStream(Exchange ex, JsonNode id, Principal.Caller caller, Task task, A2aVersion v) {
        stream(ex, caller, task, v, (member, payload) -> {
            ObjectNode out = Json.object();
            out.put("jsonrpc", "2.0");
            out.set("id", id);
            out.set("result", A2aWire.streamItem(member, payload, v));
            return out;
        }, e -> rpcErrorBody(id, e, v));
    }

    // ------------------------------------------------------------------ streams

    private interface Frame {
        ObjectNode of(String member, ObjectNode payload);
    }

    /**
     * Writes the task's stream as SSE, on a thread of its own (it may wait for hours); an error
     * after the stream began is its last event. Like an inbox stream, it is watched: a client that
     * stops reading is cut after the slow-reader timeout, so its blocked write holds no thread and
     * no memory for longer.
     */
    private void stream(Exchange ex, Principal.Caller caller, Task task, A2aVersion v, Frame frame,
                        java.util.function.Function<A2aError, ObjectNode> errorFrame) {
        ex.goOnAlone(alone -> serve(alone, caller, task, v, frame, errorFrame));
    }

    private void serve(Exchange ex, Principal.Caller caller, Task task, A2aVersion v, Frame frame,
                       java.util.function.Function<A2aError, ObjectNode> errorFrame) {
        StreamWatchdog.Watch watch = watchdog.watch(Thread.currentThread());
        serving.opened();
        try (StreamBody out = ex.eventStream()) {
            watch.answering(out);
            A2aAgent.Sink sink = new A2aAgent.Sink() {
                @Override
                public void send(String member, ObjectNode payload) throws IOException {
                    watch.write(out, event("", frame.of(member, payload)));
                }

                @Override
                public void heartbeat() throws IOException {
                    watch.write(out, HEARTBEAT);
                }
            };
            try {
                agent.stream(caller, task, v, sink);
            } catch (A2aError | ParleyException e) {
                watch.write(out, errorEvent(errorFrame.apply(e instanceof A2aError a ? a : A2aError.from(
                        (ParleyException) e))));
            }
        } catch (IOException | UncheckedIOException | InterruptedException e) {
            if (watch.tripped()) {
                metrics.slowReadersDisconnected.increment();
                LOG.log(Level.WARNING, "disconnected a slow reader of the A2A stream of task " + task.id()
                        + "; it resubscribes to continue");
            } else {
                LOG.log(Level.FINE, "A2A stream of task " + task.id() + " ended: " + e);
            }
        } finally {
            Thread.interrupted(); // a watchdog interrupt must not leak into the server's connection handling
            watchdog.unwatch(watch);
            serving.closed(); // after the stream's end was written
        }
    }

    /**
     * After the task watch closed (the hub stops, and each stream's last event says so): waits,
     * at most {@code timeout}, until every stream has written its end.
     */
    public boolean awaitEnded(Duration timeout) throws InterruptedException {
        return serving.awaitNone(timeout);
    }

    /** One SSE event of {@code type} (none: a message event) carrying {@code body}. */
    private static byte[] event(String type, ObjectNode body) {
        return ((type.isEmpty() ? "" : "event: " + type + "\n") + "data: "
                + new String(Json.bytes(body), StandardCharsets.UTF_8) + "\n\n").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] errorEvent(ObjectNode body) {
        return event("error", body);
    }

    // ------------------------------------------------------------------ HTTP+JSON

    private interface RestHandler {
        void handle(Exchange ex, Principal.Caller caller, Node node) throws Exception;
    }

    private void rest(Exchange ex, RestHandler handler) {
        try {
            A2aVersion version = version(ex);
            if (version != A2aVersion.V1_0) {
                throw new A2aError(A2aError.Kind.VERSION_NOT_SUPPORTED, "the HTTP+JSON binding here speaks A2A 1.0"
                        + " (a request without A2A-Version means 0.3): send the header A2A-Version: 1.0, or use"
                        + " JSON-RPC at POST /a2a/{node} for 0.3", 400, Map.of("supportedVersions", "1.0"));
            }
            Principal.Caller caller = caller(ex);
            handler.handle(ex, caller, agent.agent(ex.path("node")));
        } catch (A2aError e) {
            restError(ex, e);
        } catch (ParleyException e) {
            restError(ex, A2aError.from(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            restError(ex, new A2aError(A2aError.Kind.INTERNAL, "the hub is shutting down"));
        } catch (Exception e) {
            LOG.log(Level.SEVERE, "A2A HTTP+JSON request failed", e);
            restError(ex, new A2aError(A2aError.Kind.INTERNAL, "internal error; the hub log has the details"));
        }
    }

    private static ObjectNode restBody(Exchange ex, boolean optional) {
        JsonNode tree;
        try {
            byte[] raw = ex.rawBody();
            if (raw.length == 0 && optional) {
                return Json.object();
            }
            tree = Json.MAPPER.readTree(raw);
        } catch (IOException | RuntimeException e) {
            throw unreadable(e);
        }
        if (!(tree instanceof ObjectNode object)) {
            throw A2aError.invalidParams("the body must be a JSON object");
        }
        return object;
    }

    /** A body that could not be read as JSON: too large, or what is wrong with it in the sender's words. */
    private static A2aError unreadable(Exception e) {
        if (e instanceof ParleyException p) {
            return A2aError.from(p);
        }
        return new A2aError(A2aError.Kind.PARSE_ERROR, "the body is not valid JSON"
                + (e instanceof IOException io ? ": " + JsonFailures.explain(io) : ""));
    }

    private void restSend(Exchange ex, Principal.Caller caller, Node node) throws InterruptedException {
        ObjectNode body = restBody(ex, false);
        Task task = send(body, caller, node, A2aVersion.V1_0, true);
        ex.json(200, A2aWire.streamItem("task", A2aWire.task(task, A2aVersion.V1_0, historyLength(body), true),
                A2aVersion.V1_0));
    }

    private void restStream(Exchange ex, Principal.Caller caller, Node node) throws InterruptedException {
        Task task = send(restBody(ex, false), caller, node, A2aVersion.V1_0, false);
        restStreamOf(ex, caller, task);
    }

    private void restStreamOf(Exchange ex, Principal.Caller caller, Task task) {
        stream(ex, caller, task, A2aVersion.V1_0, (member, payload) -> A2aWire.streamItem(member, payload,
                A2aVersion.V1_0), A2aRoutes::restErrorBody);
    }

    private void restList(Exchange ex, Principal.Caller caller, Node node) {
        ex.json(200, list(caller, node, ex.query("contextId").filter(s -> !s.isEmpty()), ex.query("status"),
                ex.query("statusTimestampAfter"), queryInt(ex, "pageSize", 1, MAX_PAGE), ex.query("pageToken")
                        .filter(s -> !s.isEmpty()), queryInt(ex, "historyLength", 0, Integer.MAX_VALUE),
                ex.query("includeArtifacts").map(b -> switch (b) {
                    case "true" -> true;
                    case "false" -> false;
                    default -> throw A2aError.invalidParams("includeArtifacts must be true or false");
                })));
    }

    private void restTaskGet(Exchange ex, Principal.Caller caller, Node node) throws InterruptedException {
        String selector = ex.path("task");
        if (selector.endsWith(":subscribe")) {
            subscribe(ex, caller, node, selector.substring(0, selector.length() - ":subscribe".length()));
            return;
        }
        ex.json(200, A2aWire.task(agent.visible(caller, node, selector), A2aVersion.V1_0,
                queryInt(ex, "historyLength", 0, Integer.MAX_VALUE), true));
    }

    private void restTaskPost(Exchange ex, Principal.Caller caller, Node node) throws InterruptedException {
        String selector = ex.path("task");
        if (selector.endsWith(":cancel")) {
            restBody(ex, true);
            String taskId = selector.substring(0, selector.length() - ":cancel".length());
            ex.json(200, A2aWire.task(agent.cancel(caller, node, taskId), A2aVersion.V1_0, Optional.empty(), true));
        } else if (selector.endsWith(":subscribe")) {
            subscribe(ex, caller, node, selector.substring(0, selector.length() - ":subscribe".length()));
        } else {
            throw new A2aError(A2aError.Kind.METHOD_NOT_FOUND, "POST /tasks/{id} takes :cancel or :subscribe", 405,
                    Map.of());
        }
    }

    private void subscribe(Exchange ex, Principal.Caller caller, Node node, String taskId) throws InterruptedException {
        Task task = agent.visible(caller, node, taskId);
        if (task.state().terminal()) {
            throw terminal(task);
        }
        restStreamOf(ex, caller, task);
    }

    private void restPushCreate(Exchange ex, Principal.Caller caller, Node node) {
        ObjectNode body = restBody(ex, false);
        String taskId = ex.path("task");
        Optional<String> named = A2aWire.id(body, "taskId");
        if (named.isPresent() && !named.get().equals(taskId)) {
            throw A2aError.invalidParams("taskId in the body (" + named.get() + ") is not the task of the path");
        }
        TaskWebhook created = agent.setPush(caller, node, taskId, A2aWire.pushConfig(body, A2aVersion.V1_0, "body"),
                A2aVersion.V1_0);
        ex.json(200, A2aWire.pushConfig(created, A2aVersion.V1_0));
    }

    private void restPushList(Exchange ex, Principal.Caller caller, Node node) {
        ObjectNode out = Json.object();
        ArrayNode configs = out.putArray("configs");
        agent.listPush(caller, node, ex.path("task")).forEach(w -> configs.add(A2aWire.pushConfig(w, A2aVersion.V1_0)));
        out.put("nextPageToken", "");
        ex.json(200, out);
    }

    private void restPushGet(Exchange ex, Principal.Caller caller, Node node) {
        ex.json(200, A2aWire.pushConfig(agent.getPush(caller, node, ex.path("task"), Optional.of(ex.path("config"))),
                A2aVersion.V1_0));
    }

    private void restPushDelete(Exchange ex, Principal.Caller caller, Node node) {
        agent.deletePush(caller, node, ex.path("task"), ex.path("config"));
        ex.json(200, Json.object());
    }

    /** The google.rpc.Status error body of the HTTP+JSON binding (section 11.6). */
    private static ObjectNode restErrorBody(A2aError e) {
        ObjectNode out = Json.object();
        ObjectNode error = out.putObject("error");
        error.put("code", e.httpStatus);
        error.put("status", e.statusName());
        error.put("message", e.getMessage() == null ? e.kind.title : e.getMessage());
        error.putArray("details").add(errorInfo(e));
        return out;
    }

    private void restError(Exchange ex, A2aError e) {
        send(ex, e.httpStatus, A2aWire.A2A_JSON, Json.bytes(restErrorBody(e)));
    }

    private static ObjectNode errorInfo(A2aError e) {
        ObjectNode info = Json.object();
        info.put("@type", "type.googleapis.com/google.rpc.ErrorInfo");
        info.put("reason", reason(e));
        info.put("domain", e.kind == A2aError.Kind.REFUSED ? "parley.dev" : "a2a-protocol.org");
        ObjectNode metadata = info.putObject("metadata");
        e.metadata.forEach(metadata::put);
        metadata.put("timestamp", Json.time(Instant.now()));
        return info;
    }

    private static String reason(A2aError e) {
        return e.kind == A2aError.Kind.REFUSED
                ? e.metadata.getOrDefault("parleyError", "refused").toUpperCase(java.util.Locale.ROOT)
                : e.kind.reason();
    }

    private static void send(Exchange ex, int status, String contentType, byte[] body) {
        if (!ex.answered()) {
            ex.send(status, contentType, body);
        }
    }

    // ------------------------------------------------------------------ parameters

    private static String required(ObjectNode p, String field) {
        return A2aWire.id(p, field).orElseThrow(() -> A2aError.invalidParams("params." + field + " is required"));
    }

    private static Optional<String> optionalText(ObjectNode p, String field) {
        JsonNode value = p.get(field);
        if (value == null || value.isNull() || (value.isTextual() && value.textValue().isEmpty())) {
            return Optional.empty();
        }
        if (!value.isTextual()) {
            throw A2aError.invalidParams("params." + field + " must be a string");
        }
        return Optional.of(value.textValue());
    }

    private static Optional<String> optionalEnum(ObjectNode p, String field) {
        JsonNode value = p.get(field);
        if (value != null && value.isInt()) {
            return Optional.of(switch (value.intValue()) {
                case 0 -> "TASK_STATE_UNSPECIFIED";
                case 1 -> "TASK_STATE_SUBMITTED";
                case 2 -> "TASK_STATE_WORKING";
                case 3 -> "TASK_STATE_COMPLETED";
                case 4 -> "TASK_STATE_FAILED";
                case 5 -> "TASK_STATE_CANCELED";
                case 6 -> "TASK_STATE_INPUT_REQUIRED";
                case 7 -> "TASK_STATE_REJECTED";
                case 8 -> "TASK_STATE_AUTH_REQUIRED";
                default -> throw A2aError.invalidParams("params." + field + " is not a TaskState");
            });
        }
        return optionalText(p, field);
    }

    private static Optional<Integer> optionalInt(ObjectNode p, String field, int min, int max) {
        JsonNode value = p.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt() || value.intValue() < min || value.intValue() > max) {
            throw A2aError.invalidParams("params." + field + " must be an integer between " + min + " and " + max);
        }
        return Optional.of(value.intValue());
    }

    private static Optional<Boolean> optionalBool(ObjectNode p, String field) {
        JsonNode value = p.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isBoolean()) {
            throw A2aError.invalidParams(field + " must be true or false");
        }
        return Optional.of(value.booleanValue());
    }

    private static Optional<Integer> historyLength(ObjectNode p) {
        return p.get("configuration") instanceof ObjectNode c
                ? optionalInt(c, "historyLength", 0, Integer.MAX_VALUE) : Optional.empty();
    }

    private static Optional<Integer> queryInt(Exchange ex, String name, int min, int max) {
        Optional<String> raw = ex.query(name);
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        try {
            int value = Integer.parseInt(raw.get().strip());
            if (value >= min && value <= max) {
                return Optional.of(value);
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw A2aError.invalidParams(name + " must be an integer between " + min + " and " + max);
    }
}
