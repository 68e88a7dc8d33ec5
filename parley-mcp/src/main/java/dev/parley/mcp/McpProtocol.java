package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The MCP server methods of Parley for a request/response transport (the hub's
 * {@code POST /mcp}): {@code initialize}, {@code ping}, {@code tools/list},
 * {@code tools/call}, {@code logging/setLevel}, and the client's notifications. The
 * transport owns HTTP, sessions and credentials and hands each checked message here with
 * the session and the node's {@link ChannelTools}; the tools are the very ones the stdio
 * bridge serves.
 */
public final class McpProtocol {
    /** Newest first; an unknown requested version is answered with the newest. */
    public static final List<String> VERSIONS = List.of("2025-11-25", "2025-06-18", "2025-03-26");
    private static final Set<String> LOG_LEVELS = Set.of("debug", "info", "notice", "warning", "error", "critical",
            "alert", "emergency");

    private final String serverVersion;

    public McpProtocol(String serverVersion) {
        this.serverVersion = serverVersion;
    }

    /**
     * Answers one message that {@link JsonRpc#check} accepted: a response for a request,
     * nothing for a notification or a response. Never throws for anything the client sent.
     */
    public Optional<ObjectNode> answer(JsonRpc.Checked message, McpSession session, ChannelTools tools) {
        JsonRpc.Kind kind = message.kind().orElseThrow();
        JsonNode params = message.message().path("params");
        if (kind == JsonRpc.Kind.RESPONSE) {
            return Optional.empty(); // this server sends no requests, so no answer is awaited
        }
        if (kind == JsonRpc.Kind.NOTIFICATION) {
            if (message.method().equals("notifications/initialized")) {
                session.initialized(true);
            }
            return Optional.empty(); // notifications/cancelled and the rest: nothing to do
        }
        JsonNode id = message.message().get("id");
        return Optional.of(switch (message.method()) {
            case "initialize" -> JsonRpc.result(id, initialize(params, session));
            case "ping" -> JsonRpc.result(id, McpJson.object());
            case "tools/list" -> JsonRpc.result(id, toolsList());
            case "tools/call" -> toolsCall(id, params, tools);
            case "logging/setLevel" -> setLevel(id, params, session);
            default -> JsonRpc.error(id, JsonRpc.METHOD_NOT_FOUND, "Method not found: " + message.method());
        });
    }

    /** The version to speak: the client's when supported, else the newest. */
    public static String negotiate(String requested) {
        return VERSIONS.contains(requested) ? requested : VERSIONS.getFirst();
    }

    private ObjectNode initialize(JsonNode params, McpSession session) {
        String version = negotiate(params.path("protocolVersion").asText(""));
        session.protocolVersion(version);
        ObjectNode result = McpJson.object();
        result.put("protocolVersion", version);
        ObjectNode capabilities = result.putObject("capabilities");
        capabilities.putObject("tools").put("listChanged", false);
        capabilities.putObject("logging");
        result.putObject("serverInfo").put("name", "parley").put("version", serverVersion);
        result.put("instructions", Instructions.forHttp(session.node()));
        return result;
    }

    private static ObjectNode toolsList() {
        ObjectNode result = McpJson.object();
        ArrayNode list = result.putArray("tools");
        for (ChannelTools.Spec spec : ChannelTools.SPECS) {
            ObjectNode tool = list.addObject();
            tool.put("name", spec.name());
            tool.put("description", spec.description());
            tool.set("inputSchema", spec.inputSchema());
        }
        return result;
    }

    private static ObjectNode toolsCall(JsonNode id, JsonNode params, ChannelTools tools) {
        String name = params.path("name").asText();
        if (ChannelTools.spec(name).isEmpty()) {
            return JsonRpc.error(id, JsonRpc.INVALID_PARAMS, "Unknown tool: " + name
                    + " (the tools are send, reply, ack, inbox, peers, status)");
        }
        return JsonRpc.result(id, tools.call(name, params.get("arguments"), params.get("_meta")).toJson());
    }

    private static ObjectNode setLevel(JsonNode id, JsonNode params, McpSession session) {
        String level = params.path("level").asText("");
        if (!LOG_LEVELS.contains(level)) {
            return JsonRpc.error(id, JsonRpc.INVALID_PARAMS, "Invalid params: level must be one of " + LOG_LEVELS);
        }
        session.logLevel(level);
        return JsonRpc.result(id, McpJson.object());
    }
}
