package dev.parley.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The one Jackson mapper of the MCP surface (plain trees; field order kept). A key twice in
 * one object is refused, as on every other surface of the hub: which "id" would count?
 */
public final class McpJson {
    public static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

    private McpJson() {
    }

    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** Parses JSON text; {@link JsonFailures#explain} says what is wrong. */
    public static JsonNode parse(String text) throws JsonProcessingException {
        return MAPPER.readTree(text);
    }

    /** Parses JSON bytes, which must be UTF-8; {@link JsonFailures#explain} says what is wrong. */
    public static JsonNode parse(byte[] bytes) throws java.io.IOException {
        return MAPPER.readTree(bytes);
    }

    /** Compact JSON text of a tree. */
    public static String text(JsonNode tree) {
        try {
            return MAPPER.writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree could not be written", e);
        }
    }

    /** Indented JSON text, for what a model reads. */
    public static String pretty(JsonNode tree) {
        try {
            return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree could not be written", e);
        }
    }
}
