package dev.parley.server.mcp;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.Graph;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.mcp.ChannelTools;
import dev.parley.mcp.JsonRpc;
import dev.parley.mcp.McpProtocol;
import dev.parley.mcp.McpSession;
import dev.parley.mcp.McpVersion;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;

import java.net.URI;
import java.time.InstantSource;
import java.util.Locale;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * MCP Streamable HTTP at {@code /mcp} (specification 2025-11-25, also 2025-06-18 and
 * 2025-03-26 clients): {@code POST} carries one JSON-RPC message and is answered with
 * {@code application/json} (a request) or {@code 202 Accepted} (a notification or a
 * response); {@code initialize} opens a session whose {@code Mcp-Session-Id} every later
 * message must carry; {@code DELETE} ends it; {@code GET} answers 405, since the hub opens
 * no server-to-client stream here (the push surface is the stdio bridge).
 *
 * <p>The bearer token names the node, as on every route; the Host and Origin headers are
 * checked against DNS rebinding. HTTP-level refusals (401, 403, 406, 413, 415) carry the
 * contract's error body; JSON-RPC problems carry a JSON-RPC error. The tools are
 * {@link ChannelTools} over a {@link LocalHubPort}: the router, ACL and audit of every send.
 */
public final class McpRoutes {
    private static final Logger LOG = Logger.getLogger(McpRoutes.class.getName());
    static final String SESSION_HEADER = "Mcp-Session-Id";
    static final String VERSION_HEADER = "MCP-Protocol-Version";

    private final LocalHubPort.Services services;
    private final Graph graph;
    private final McpSessions sessions;
    private final McpProtocol protocol = new McpProtocol(McpVersion.current());
    private final boolean loopbackHub;
    private final InstantSource clock;
    private volatile Optional<NodeId> unauthenticatedAs = Optional.empty();

    public McpRoutes(LocalHubPort.Services services, Graph graph, McpSessions sessions, boolean loopbackHub,
              InstantSource clock) {
        this.services = services;
        this.graph = graph;
        this.sessions = sessions;
        this.loopbackHub = loopbackHub;
        this.clock = clock;
    }

    public void register(Routes routes) {
        routes.post("/mcp", this::post).delete("/mcp", this::delete).tokenlessAs("/mcp", this::conformanceCaller);
    }

    /**
     * For conformance runs only: an MCP request with no Authorization header at all acts as
     * {@code node}, which must exist (else whoever created it later would be impersonated).
     * Refused unless the hub listens on loopback; a wrong token still gets 401. Such requests
     * are {@code node}'s in every respect, its rate limit included; once it is deleted they
     * get 401.
     */
    public void unauthenticatedAs(NodeId node) {
        if (!loopbackHub) {
            throw new IllegalStateException("unauthenticated MCP is only for a hub that listens on loopback");
        }
        if (!services.registry().exists(node)) {
            throw new IllegalArgumentException("MCP requests without a token cannot act as node " + node
                    + ": it does not exist; create it first (parley node add " + node + "), then start the hub again");
        }
        LOG.warning("MCP requests without a token act as node " + node + " (conformance mode); never use this"
                + " on a hub that others can reach");
        unauthenticatedAs = Optional.of(node);
    }

    /** Whom a request without any Authorization header acts as: the conformance node while it exists, else no one. */
    private Optional<Principal> conformanceCaller() {
        return unauthenticatedAs.filter(services.registry()::exists).map(Principal.Caller::new);
    }

    public static boolean loopback(String host) {
        return isLoopbackName(host);
    }

    private void post(Exchange ex) {
        guardOrigin(ex);
        NodeId node = node(ex);
        String contentType = ex.header("Content-Type").orElse("").toLowerCase(Locale.ROOT);
        if (!contentType.startsWith("application/json")) {
            throw new ParleyException(ErrorCode.UNSUPPORTED_MEDIA_TYPE,
                    "an MCP message is sent as Content-Type: application/json");
        }
        if (!acceptsJson(ex.header("Accept"))) {
            ObjectNode body = Json.object();
            body.put("error", "not_acceptable");
            body.put("message", "this endpoint answers application/json; accept it (and text/event-stream)");
            ex.json(406, body);
            return;
        }
        JsonRpc.Checked checked = JsonRpc.parse(ex.rawBody());
        if (!checked.accepted()) {
            // A message that is not JSON-RPC at all is a bad HTTP request; a request with bad params is
            // answered like any other JSON-RPC error.
            ObjectNode error = checked.answer().orElseGet(() -> JsonRpc.error(null, JsonRpc.INVALID_PARAMS,
                    "Invalid params: the notification's \"params\" must be an object"));
            int code = error.path("error").path("code").asInt();
            ex.json(code == JsonRpc.PARSE_ERROR || code == JsonRpc.INVALID_REQUEST || error.path("id").isNull()
                    ? 400 : 200, error);
            return;
        }
        boolean initialize = checked.kind().orElseThrow() == JsonRpc.Kind.REQUEST
                && checked.method().equals("initialize");
        McpSession session;
        if (initialize) {
            session = sessions.create(node.value(), clock.instant());
            ex.answerHeader(SESSION_HEADER, session.id());
        } else {
            Optional<String> version = ex.header(VERSION_HEADER);
            if (version.isPresent() && !McpProtocol.VERSIONS.contains(version.get().strip())) {
                ex.json(400, JsonRpc.error(checked.message().get("id"), JsonRpc.INVALID_REQUEST,
                        "Bad Request: unsupported " + VERSION_HEADER + " " + version.get() + "; supported: "
                                + String.join(", ", McpProtocol.VERSIONS)));
                return;
            }
            Optional<String> id = ex.header(SESSION_HEADER);
            if (id.isEmpty()) {
                ex.json(400, JsonRpc.error(checked.message().get("id"), JsonRpc.INVALID_REQUEST,
                        "Bad Request: the " + SESSION_HEADER + " header is required; send initialize first"));
                return;
            }
            Optional<McpSession> found = sessions.find(id.get().strip(), node.value(), clock.instant());
            if (found.isEmpty()) {
                ex.json(404, JsonRpc.error(checked.message().get("id"), -32001,
                        "Session not found: it ended, expired or belongs to another node; initialize again"));
                return;
            }
            session = found.get();
        }
        Principal caller = new Principal.Caller(node);
        Optional<ObjectNode> answer = protocol.answer(checked, session,
                new ChannelTools(new LocalHubPort(services, caller)));
        if (answer.isPresent()) {
            ex.json(200, answer.get());
        } else {
            ex.empty(202);
        }
    }

    private void delete(Exchange ex) {
        guardOrigin(ex);
        NodeId node = node(ex);
        Optional<String> id = ex.header(SESSION_HEADER);
        if (id.isEmpty()) {
            ex.json(400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST,
                    "Bad Request: the " + SESSION_HEADER + " header names the session to end"));
            return;
        }
        if (!sessions.close(id.get().strip(), node.value())) {
            ex.json(404, JsonRpc.error(null, -32001, "Session not found"));
            return;
        }
        ex.noContent();
    }

    /**
     * The node the request acts as: from the bearer token, or the conformance node when there is
     * no token. The admin token has none (403, the contract's error body).
     */
    private NodeId node(Exchange ex) {
        return ex.caller().actingNode(graph, "use MCP").id();
    }

    /**
     * DNS rebinding guard: on a loopback hub the Host must name this machine, and an Origin,
     * when present, must be a loopback origin (or, on a hub listening elsewhere, the Host's own).
     */
    private void guardOrigin(Exchange ex) {
        String host = ex.header("Host").orElse("");
        if (loopbackHub && !isLoopbackName(hostName(host))) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "the Host header must name this machine"
                    + " (localhost, 127.0.0.1 or [::1]); refused to prevent DNS rebinding");
        }
        Optional<String> origin = ex.header("Origin");
        if (origin.isEmpty()) {
            return;
        }
        String originHost;
        String originAuthority;
        try {
            URI uri = new URI(origin.get().strip());
            originHost = uri.getHost() == null ? "" : uri.getHost();
            originAuthority = uri.getRawAuthority() == null ? "" : uri.getRawAuthority();
        } catch (java.net.URISyntaxException e) {
            originHost = "";
            originAuthority = "";
        }
        boolean allowed = isLoopbackName(originHost) || (!loopbackHub && originAuthority.equalsIgnoreCase(host));
        if (!allowed) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "Origin " + origin.get() + " may not use this hub's MCP"
                    + " endpoint; refused to prevent DNS rebinding");
        }
    }

    private static boolean acceptsJson(Optional<String> accept) {
        if (accept.isEmpty() || accept.get().isBlank()) {
            return true;
        }
        String value = accept.get().toLowerCase(Locale.ROOT);
        return value.contains("application/json") || value.contains("*/*") || value.contains("application/*");
    }

    /** The host part of a Host header value ({@code name:port}, {@code [v6]:port}). */
    private static String hostName(String authority) {
        String value = authority.strip();
        if (value.startsWith("[")) {
            int end = value.indexOf(']');
            return end < 0 ? value : value.substring(0, end + 1);
        }
        int colon = value.indexOf(':');
        return colon < 0 || value.indexOf(':', colon + 1) >= 0 ? value : value.substring(0, colon);
    }

    private static boolean isLoopbackName(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        return h.equals("localhost") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1") || h.matches("127(\\.\\d{1,3}){3}");
    }
}
