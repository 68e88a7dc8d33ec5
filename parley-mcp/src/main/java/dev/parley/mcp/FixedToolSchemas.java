package dev.parley.mcp;

import io.modelcontextprotocol.json.schema.JsonSchemaValidator;

import java.util.Map;

/**
 * The SDK's schema check, turned off. Our tools' schemas are fixed in {@link ChannelTools},
 * which also checks every call's arguments itself (the same way on stdio and HTTP). Turning
 * the SDK's check off also keeps its JSON Schema library out of the way: the SDK wants
 * json-schema-validator 3 (Jackson 3), the hub's payload schemas use version 2, and one
 * classpath can hold only one.
 */
final class FixedToolSchemas implements JsonSchemaValidator {

    @Override
    public ValidationResponse validate(Map<String, Object> schema, Object structuredContent) {
        return ValidationResponse.asValid(null);
    }

    @Override
    public ValidationResponse validateSchema(Map<String, Object> schema) {
        return ValidationResponse.asValid(null);
    }
}
