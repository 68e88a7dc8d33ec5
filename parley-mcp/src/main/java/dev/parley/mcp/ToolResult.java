package dev.parley.mcp;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Optional;

/**
 * What one tool call gives back, independent of any MCP library: the text a model reads,
 * optional structured content (a JSON object, the hub's answer), and whether the call failed
 * ({@code isError: true} on the wire: a tool error the model can read and act on, not a
 * protocol error).
 */
public record ToolResult(String text, Optional<ObjectNode> structured, boolean isError) {

    public static ToolResult ok(String text, ObjectNode structured) {
        return new ToolResult(text, Optional.ofNullable(structured), false);
    }

    public static ToolResult error(String text) {
        return new ToolResult(text, Optional.empty(), true);
    }

    /** The {@code CallToolResult} JSON of the MCP specification. */
    public ObjectNode toJson() {
        ObjectNode out = McpJson.object();
        out.putArray("content").addObject().put("type", "text").put("text", text);
        structured.ifPresent(s -> out.set("structuredContent", s));
        if (isError) {
            out.put("isError", true);
        }
        return out;
    }
}
