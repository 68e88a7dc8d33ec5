package dev.parley.trace.permission;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.ToolKind;

/**
 * What an agent asks: may node {@code node} call {@code tool} (of {@code kind}) with
 * {@code input} (a JSON object)? {@code requestId} is the agent's own id of the question.
 */
public record PermissionAsk(String requestId, String node, String tool, ToolKind kind, JsonNode input) {
    public PermissionAsk {
        if (input == null || !input.isObject()) {
            throw new IllegalArgumentException("input: a JSON object is required");
        }
        input = input.deepCopy();
    }
}
