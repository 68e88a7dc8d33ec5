package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Optional;

/**
 * JSON-RPC 2.0 as MCP uses it: the error codes of the specification, error responses, and
 * the one check of a message's shape that every MCP transport of Parley runs before it
 * handles anything, so malformed input gets the same answer on stdio and over HTTP.
 */
public final class JsonRpc {
    public static final int PARSE_ERROR = -32700;
    public static final int INVALID_REQUEST = -32600;
    public static final int METHOD_NOT_FOUND = -32601;
    public static final int INVALID_PARAMS = -32602;
    public static final int INTERNAL_ERROR = -32603;

    private JsonRpc() {
    }

    /** The kinds of well-formed message. */
    public enum Kind { REQUEST, NOTIFICATION, RESPONSE }

    /** An error response; {@code id} may be null (the request's id could not be read). */
    public static ObjectNode error(JsonNode id, int code, String message) {
        ObjectNode out = McpJson.object();
        out.put("jsonrpc", "2.0");
        out.set("id", id == null ? NullNode.getInstance() : id);
        out.putObject("error").put("code", code).put("message", message);
        return out;
    }

    public static ObjectNode result(JsonNode id, JsonNode result) {
        ObjectNode out = McpJson.object();
        out.put("jsonrpc", "2.0");
        out.set("id", id);
        out.set("result", result);
        return out;
    }

    /** Parses one message's text; a parse failure is answered with -32700. */
    public static Checked parse(String text) {
        return parsed(() -> McpJson.parse(text));
    }

    /** Parses one message's bytes (UTF-8, as JSON-RPC over HTTP is); a parse failure is answered with -32700. */
    public static Checked parse(byte[] bytes) {
        return parsed(() -> McpJson.parse(bytes));
    }

    private static Checked parsed(java.util.concurrent.Callable<JsonNode> parse) {
        JsonNode message;
        try {
            message = parse.call();
        } catch (Exception e) {
            return Checked.refused(error(null, PARSE_ERROR, "Parse error: the message is not valid JSON ("
                    + JsonFailures.explain(e) + ")"));
        }
        return check(message);
    }

    /**
     * Checks a parsed message: one JSON object (batches were removed in MCP 2025-06-18),
     * {@code "jsonrpc": "2.0"}, a string method, an id that is a string or an integer, params
     * that are an object.
     */
    public static Checked check(JsonNode message) {
        if (message == null || message.isArray()) {
            return Checked.refused(error(null, INVALID_REQUEST, "Invalid Request: batch requests are not supported"
                    + " (JSON-RPC batching was removed in MCP 2025-06-18); send one message at a time"));
        }
        if (!message.isObject()) {
            return Checked.refused(error(null, INVALID_REQUEST, "Invalid Request: a JSON-RPC message must be a JSON object"));
        }
        JsonNode id = message.get("id");
        boolean idValid = id != null && (id.isTextual() || id.isIntegralNumber());
        JsonNode replyId = idValid ? id : null;
        if (!"2.0".equals(message.path("jsonrpc").asText(null)) || !message.path("jsonrpc").isTextual()) {
            return Checked.refused(error(replyId, INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\""));
        }
        if (id != null && !idValid) {
            return Checked.refused(error(null, INVALID_REQUEST,
                    "Invalid Request: \"id\" must be a string or an integer (and not null)"));
        }
        JsonNode method = message.get("method");
        if (method == null) {
            if (id != null && (message.has("result") || message.has("error"))) {
                return Checked.ok(Kind.RESPONSE, message);
            }
            return Checked.refused(error(replyId, INVALID_REQUEST,
                    "Invalid Request: a message needs a \"method\" (request or notification) or a \"result\"/\"error\" (response)"));
        }
        if (!method.isTextual() || method.textValue().isEmpty()) {
            return Checked.refused(error(replyId, INVALID_REQUEST, "Invalid Request: \"method\" must be a non-empty string"));
        }
        JsonNode params = message.get("params");
        if (params != null && !params.isNull() && !params.isObject()) {
            return id == null ? Checked.refused(null)
                    : Checked.refused(error(id, INVALID_PARAMS, "Invalid params: \"params\" must be an object"));
        }
        if (id != null && "tools/call".equals(method.textValue())) {
            JsonNode name = message.path("params").path("name");
            if (!name.isTextual()) {
                return Checked.refused(error(id, INVALID_PARAMS, "Invalid params: tools/call needs \"name\", the tool's name as a string"));
            }
            if (ChannelTools.spec(name.textValue()).isEmpty()) {
                return Checked.refused(error(id, INVALID_PARAMS, "Unknown tool: " + name.textValue()
                        + " (the tools are send, reply, ack, inbox, peers, status)"));
            }
            JsonNode arguments = message.path("params").get("arguments");
            if (arguments != null && !arguments.isNull() && !arguments.isObject()) {
                return Checked.refused(error(id, INVALID_PARAMS, "Invalid params: tools/call \"arguments\" must be an object"));
            }
        }
        return Checked.ok(id == null ? Kind.NOTIFICATION : Kind.REQUEST, message);
    }

    /**
     * The outcome of a check: a message of a known kind, or a refusal with the error response
     * to send ({@code answer} empty when nothing may be answered, e.g. a bad notification).
     */
    public record Checked(Optional<Kind> kind, JsonNode message, Optional<ObjectNode> answer) {
        static Checked ok(Kind kind, JsonNode message) {
            return new Checked(Optional.of(kind), message, Optional.empty());
        }

        static Checked refused(ObjectNode answer) {
            return new Checked(Optional.empty(), null, Optional.ofNullable(answer));
        }

        public boolean accepted() {
            return kind.isPresent();
        }

        public String method() {
            return message.path("method").asText();
        }
    }
}
