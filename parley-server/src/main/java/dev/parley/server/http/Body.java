package dev.parley.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.JsonText;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Payload;
import dev.parley.core.VisibleAscii;
import dev.parley.mcp.JsonFailures;
import dev.parley.server.wire.Json;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A request body parsed as a JSON object, with typed accessors that turn a wrong or
 * missing field into {@code invalid_request} naming the field.
 */
public record Body(ObjectNode json) {

    public static Body parse(byte[] bytes) {
        if (bytes.length == 0) {
            return new Body(Json.MAPPER.createObjectNode());
        }
        JsonNode node;
        try {
            node = Json.MAPPER.readTree(bytes);
        } catch (java.io.IOException e) {
            throw invalid("the body is not valid JSON: " + JsonFailures.explain(e));
        }
        if (!(node instanceof ObjectNode object)) {
            throw invalid("the body must be a JSON object");
        }
        return new Body(object);
    }

    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

    public Optional<String> string(String field) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isTextual()) {
            throw invalid("field '" + field + "' must be a string");
        }
        return Optional.of(value.textValue());
    }

    public String requiredString(String field) {
        return string(field).orElseThrow(() -> invalid("field '" + field + "' is required"));
    }

    public Optional<NodeId> nodeId(String field) {
        return string(field).map(NodeId::of);
    }

    /** A free-form identifier chosen by a client: printable ASCII without spaces, at most 200 characters. */
    public Optional<String> token(String field) {
        Optional<String> value = string(field);
        if (value.isPresent() && !VisibleAscii.within(value.get(), 200)) {
            throw invalid("field '" + field + "' must be 1 to 200 printable ASCII characters without spaces");
        }
        return value;
    }

    public Optional<JsonText> rawJson(String field) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new JsonText(Json.MAPPER.writeValueAsString(value)));
        } catch (JsonProcessingException e) {
            throw invalid("field '" + field + "' cannot be encoded as JSON");
        }
    }

    public Map<String, String> stringMap(String field) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            return Map.of();
        }
        if (!value.isObject()) {
            throw invalid("field '" + field + "' must be an object of strings");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (var entry : value.properties()) {
            if (!entry.getValue().isTextual()) {
                throw invalid("field '" + field + "." + entry.getKey() + "' must be a string");
            }
            out.put(entry.getKey(), entry.getValue().textValue());
        }
        return out;
    }

    public Optional<Instant> instant(String field) {
        Optional<Instant> at;
        try {
            at = string(field).map(Instant::parse);
        } catch (DateTimeParseException e) {
            throw invalid("field '" + field + "' must be an RFC 3339 UTC time such as 2026-11-22T10:00:00.000Z");
        }
        // the store keeps epoch milliseconds: a time past them (year 300,000,000) must not reach it
        if (at.isPresent() && (at.get().isBefore(Instant.EPOCH) || at.get().isAfter(LATEST))) {
            throw invalid("field '" + field + "' must be a time between 1970 and 9999");
        }
        return at;
    }

    /** A nested object, read with the same typed accessors. */
    public Optional<Body> object(String field) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!(value instanceof ObjectNode object)) {
            throw invalid("field '" + field + "' must be an object");
        }
        return Optional.of(new Body(object));
    }

    public Optional<Long> longValue(String field) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong()) {
            throw invalid("field '" + field + "' must be an integer");
        }
        return Optional.of(value.longValue());
    }

    public Optional<Boolean> bool(String field) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isBoolean()) {
            throw invalid("field '" + field + "' must be true or false");
        }
        return Optional.of(value.booleanValue());
    }

    /** An array of strings; absent means none. */
    public List<String> strings(String field) {
        List<String> out = new ArrayList<>();
        for (JsonNode element : array(field, "strings")) {
            if (!element.isTextual()) {
                throw invalid("field '" + field + "' must be an array of strings");
            }
            out.add(element.textValue());
        }
        return out;
    }

    /** An array of objects, each read with the same typed accessors; absent means none. */
    public List<Body> objects(String field) {
        List<Body> out = new ArrayList<>();
        for (JsonNode element : array(field, "objects")) {
            if (!(element instanceof ObjectNode object)) {
                throw invalid("field '" + field + "' must be an array of objects");
            }
            out.add(new Body(object));
        }
        return out;
    }

    /** The elements of an array field; none when it is absent or null. */
    private List<JsonNode> array(String field, String ofWhat) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            return List.of();
        }
        if (!value.isArray()) {
            throw invalid("field '" + field + "' must be an array of " + ofWhat);
        }
        List<JsonNode> elements = new ArrayList<>(value.size());
        value.forEach(elements::add);
        return elements;
    }

    /**
     * The content of an envelope the hub composes for the caller (topic events, broadcasts):
     * text, data, threadId and meta. The hub sets the correlation, so corrId and messageId are not read.
     */
    public Payload content() {
        return new Payload(string("text"), rawJson("data"), Optional.empty(), token("threadId"), Optional.empty(),
                stringMap("meta"));
    }

    public static ParleyException invalid(String message) {
        return new ParleyException(ErrorCode.INVALID_REQUEST, message);
    }
}
