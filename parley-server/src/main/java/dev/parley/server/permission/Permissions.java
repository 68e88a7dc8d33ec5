package dev.parley.server.permission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.AgentSpec;
import dev.parley.core.Agents;
import dev.parley.core.Appended;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.Graph;
import dev.parley.core.JsonText;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Payload;
import dev.parley.core.Principal;
import dev.parley.core.Router;
import dev.parley.core.RuleInput;
import dev.parley.core.SendRequest;
import dev.parley.core.ToolKind;
import dev.parley.core.Traces;
import dev.parley.server.delivery.ReplyWaiters;
import dev.parley.server.http.Body;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.policy.LivePolicy;
import dev.parley.server.wire.Json;
import dev.parley.trace.ToolKinds;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;
import dev.parley.trace.TraceEvents;
import dev.parley.trace.permission.Answer;
import dev.parley.trace.permission.Decider;
import dev.parley.trace.permission.Decision;
import dev.parley.trace.permission.PermissionAsk;
import dev.parley.trace.permission.PermissionMediator;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * Permission requests, decided by the hub for every surface ({@code POST /v1/permissions}, the
 * MCP tools): an agent asks whether it may call a tool, and the hub decides —
 * the agent's spec blocklist, then the policy's permission rules, then its approver (the
 * agent's parent, or the node it names), asked with a {@code permission_request} envelope sent
 * like any other (ACL, audit) and answered by a reply to it. The call is held until the
 * decision, at most the ask's timeout.
 */
public final class Permissions {
    /** The envelope kind of a question to an approver. */
    public static final String KIND = "permission_request";
    static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(2);
    static final long MAX_TIMEOUT_MS = Duration.ofMinutes(10).toMillis();
    /** Asks one node may have waiting at once: each holds a connection and a waiter. */
    static final int MAX_PENDING_PER_NODE = 16;
    /** The most a tool's input may weigh, as JSON; it travels to the approver in the envelope. */
    static final int MAX_INPUT_BYTES = 16 * 1024;
    private static final Logger LOG = Logger.getLogger(Permissions.class.getName());
    private static final Pattern REQUEST_ID = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");
    private static final Pattern TOOL = Pattern.compile("^[^\\p{Cntrl}]{1,256}$");

    private final Router router;
    private final Graph graph;
    private final Agents agents;
    private final LivePolicy policy;
    private final ReplyWaiters waiters;
    private final Metrics metrics;
    private final Traces traces;
    private final InstantSource clock;
    private final Map<NodeId, Integer> pending = new ConcurrentHashMap<>();

    public Permissions(Router router, Graph graph, Agents agents, LivePolicy policy, ReplyWaiters waiters,
                       Metrics metrics, Traces traces, InstantSource clock) {
        this.router = router;
        this.graph = graph;
        this.agents = agents;
        this.policy = policy;
        this.waiters = waiters;
        this.metrics = metrics;
        this.traces = traces;
        this.clock = clock;
    }

    /**
     * Decides the request {@code body} of {@code caller}'s node: {@code {requestId, tool, kind?,
     * input, adapter?, approver?, timeoutMs?, turn?, envelope?}}; answers {@code {requestId, tool,
     * kind, verdict, decidedBy, reason}}. With {@code turn} and {@code envelope} (and
     * {@code adapter}), the request and the decision are recorded in that turn of the caller.
     */
    public ObjectNode decide(Principal caller, Body body) throws InterruptedException {
        Node node = caller.actingNode(graph, "ask for a permission");
        String requestId = body.requiredString("requestId");
        if (!REQUEST_ID.matcher(requestId).matches()) {
            throw Body.invalid("requestId must match " + REQUEST_ID.pattern());
        }
        String tool = body.requiredString("tool");
        if (!TOOL.matcher(tool).matches()) {
            throw Body.invalid("tool must be 1 to 256 characters, none of them control characters");
        }
        JsonNode input = body.json().get("input");
        if (input == null || !input.isObject()) {
            throw Body.invalid("input must be a JSON object: the tool's input");
        }
        if (Json.bytes(input).length > MAX_INPUT_BYTES) {
            throw new ParleyException(ErrorCode.PAYLOAD_TOO_LARGE, "input is larger than " + MAX_INPUT_BYTES
                    + " bytes as JSON; send the approver a shorter preview");
        }
        ToolKind kind = kind(body, tool, agents.toolKinds(node.id()));
        Optional<String> turn = body.string("turn");
        Optional<String> envelope = body.string("envelope");
        if (turn.isPresent() != envelope.isPresent() || turn.isPresent() && body.string("adapter").isEmpty()) {
            throw Body.invalid("turn, envelope and adapter go together: the turn to record the decision in, the"
                    + " envelope it works, and the adapter that runs it");
        }
        long timeoutMs = body.longValue("timeoutMs").orElse(DEFAULT_TIMEOUT.toMillis());
        if (timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
            throw Body.invalid("timeoutMs must be between 1 and " + MAX_TIMEOUT_MS + " (10 minutes)");
        }
        Optional<NodeId> approver = body.nodeId("approver").or(node::parent);
        if (approver.isPresent() && approver.get().equals(node.id())) {
            throw Body.invalid("approver: a node does not approve its own requests; name its parent or a person");
        }
        PermissionAsk ask = new PermissionAsk(requestId, node.id().value(), tool, kind, input);

        List<Decider> deciders = new ArrayList<>();
        deciders.add(new Decider.Blocklist(agents.toolBlocklist(node.id())));
        RuleInput.Party party = RuleInput.Party.of(node, graph);
        deciders.add(new Decider.Rules(a -> policy.permissions().rule(a, party)));
        approver.ifPresent(a -> deciders.add(new Decider.AskNode(a.value(), Duration.ofMillis(timeoutMs),
                (question, to, timeout) -> ask(caller, question, NodeId.of(to), timeout))));

        List<TraceEvent> recorded = new ArrayList<>(2);
        // the hub's events in the runner's turn: ids of their own, so they never meet the runner's
        Optional<TraceBuilder> trace = turn.map(t -> new TraceBuilder(clock, recorded::add,
                "permission-" + Integer.toHexString(requestId.hashCode()) + "-"));
        Decision decision;
        try {
            decision = PermissionMediator.decide(ask, deciders, trace);
        } finally {
            if (turn.isPresent()) {
                record(caller, turn.get(), envelope.get(), body.string("adapter").get(), recorded);
            }
        }
        ObjectNode out = Json.object();
        out.put("requestId", requestId);
        out.put("tool", tool);
        out.put("kind", kind.wire());
        out.put("verdict", decision.verdict().wire());
        out.put("decidedBy", decision.decidedBy());
        out.put("reason", decision.reason());
        return out;
    }

    /**
     * Records the request and its decision in the caller's turn. Recording never changes the
     * decision: a turn that refuses them (stopped, or a repeat of a request it already holds with
     * other times) is logged and left as it is.
     */
    private void record(Principal caller, String turn, String envelope, String adapter, List<TraceEvent> events) {
        try {
            traces.record(caller, turn, envelope, adapter, events.stream().map(TraceEvents::stored).toList());
        } catch (ParleyException e) {
            LOG.warning("permission events not recorded in turn " + turn + ": " + e.getMessage());
        }
    }

    /** The kind the body names, else the agent's own or its adapter's for the tool, else other. */
    private static ToolKind kind(Body body, String tool, AgentSpec.ToolKindOverrides own) {
        Optional<ToolKind> named = body.string("kind").map(k -> ToolKind.parse(k).orElseThrow(() -> Body.invalid(
                "kind must be one of " + java.util.Arrays.stream(ToolKind.values()).map(ToolKind::wire).toList())));
        Optional<String> adapter = body.string("adapter");
        if (adapter.isPresent() && !ToolKinds.ADAPTERS.contains(adapter.get())) {
            throw Body.invalid("adapter must be one of " + ToolKinds.ADAPTERS);
        }
        // what the hub knows of the tool wins: a caller naming Bash "read" does not get past a rule on execute
        ToolKind known = ToolKinds.builtIn().resolve(adapter.orElse(""), own.kinds(), tool); // no adapter: no table
        return known == ToolKind.OTHER ? named.orElse(ToolKind.OTHER) : known;
    }

    /**
     * Sends {@code approver} the question and waits for its reply. The envelope's messageId is the
     * request's, so asking again (after a hub restart, say) finds the same question and any reply
     * already given rather than asking twice.
     */
    private Optional<Answer> ask(Principal caller, PermissionAsk ask, NodeId approver, Duration timeout)
            throws InterruptedException {
        ObjectNode data = Json.object();
        data.put("request_id", ask.requestId());
        data.put("tool_name", ask.tool());
        data.put("kind", ask.kind().wire());
        data.set("input", ask.input());
        data.put("node", ask.node());
        String text = ask.node() + " asks permission to use " + ask.tool() + " (" + ask.kind().wire() + ")"
                + "\ninput: " + abbreviated(ask.input().toString())
                + "\nReply to this message with allow or deny (request " + ask.requestId() + ").";
        Payload payload = new Payload(Optional.of(text), Optional.of(new JsonText(new String(Json.bytes(data),
                StandardCharsets.UTF_8))), Optional.empty(), Optional.empty(),
                Optional.of(questionId(ask)), Map.of());
        NodeId asking = NodeId.of(ask.node());
        if (pending.merge(asking, 1, Integer::sum) > MAX_PENDING_PER_NODE) {
            release(asking);
            throw new ParleyException(ErrorCode.RATE_LIMITED, ask.node() + " already has " + MAX_PENDING_PER_NODE
                    + " permission requests waiting for an answer");
        }
        try {
            Appended sent = metrics.send(() -> router.send(caller, new SendRequest(approver, KIND, payload,
                    Optional.empty(), Optional.empty())));
            return waiters.await(sent.envelope().id(), timeout).map(Permissions::answer);
        } finally {
            release(asking);
        }
    }

    /**
     * The question's messageId: the same for the same request asked again (a retry after a
     * restart finds the question and its answer), another for a request id reused for another
     * tool or input, which must never inherit the answer given before.
     */
    private static String questionId(PermissionAsk ask) {
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest((ask.requestId() + "\n"
                    + ask.tool() + "\n" + ask.kind().wire() + "\n" + ask.input()).getBytes(StandardCharsets.UTF_8));
            return "permission:" + java.util.HexFormat.of().formatHex(digest, 0, 16);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private void release(NodeId node) {
        pending.computeIfPresent(node, (id, count) -> count == 1 ? null : count - 1);
    }

    private static Answer answer(Envelope reply) {
        JsonNode data = reply.data().map(d -> {
            try {
                return Json.MAPPER.readTree(d.json());
            } catch (java.io.IOException e) {
                throw new IllegalStateException("a committed envelope's data is JSON", e);
            }
        }).orElse(null);
        return new Answer(data, reply.text());
    }

    private static String abbreviated(String json) {
        return json.length() <= 2000 ? json : json.substring(0, 2000) + "…";
    }
}
