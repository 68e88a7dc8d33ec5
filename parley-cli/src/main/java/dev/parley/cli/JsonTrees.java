package dev.parley.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The client commands' JSON trees, read and written without Jackson's {@code ObjectMapper}:
 * its class initialization builds a date format, and with it the JDK's time-zone database and
 * every locale's calendar data, about a fifth of a {@code parley send}'s wall time on the 2-core
 * test machine (BENCHMARKS.md, "Issue 15, stop 61") for dates the CLI never formats. Reading makes
 * the nodes {@code ObjectMapper.readTree} makes (integers by size, other numbers as doubles, the
 * last of repeated names, a missing node for no content); {@code JsonNode.toString()} still
 * goes through a mapper, so the paths a command takes on every run avoid it.
 */
final class JsonTrees {
    private static final JsonFactory FACTORY = new JsonFactory();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final AtomicBoolean READING_PREPARED = new AtomicBoolean();

    private JsonTrees() {
    }

    static ObjectNode object() {
        return NODES.objectNode();
    }

    /** An object of text fields, in the map's order. */
    static ObjectNode texts(Map<String, String> fields) {
        ObjectNode object = object();
        fields.forEach(object::put);
        return object;
    }

    /** An array of texts, in the list's order. */
    static ArrayNode texts(List<String> items) {
        ArrayNode array = NODES.arrayNode(items.size());
        items.forEach(array::add);
        return array;
    }

    /**
     * Readies {@link #read} on a thread of its own, once a process, for a caller about to wait
     * on the network. A parser's first use initializes Jackson's number constants and with them
     * {@code BigDecimal}, whose class initializer on JDK 25 squares a 150,000-bit number in the
     * interpreter: 13–27 ms of a {@code parley send} on the 2-core test machine, spent while
     * the hub commits the message instead of after (BENCHMARKS.md, "Issue 15, stop 67").
     */
    static void prepareReading() {
        if (READING_PREPARED.compareAndSet(false, true)) {
            Thread.ofPlatform().daemon().name("parley-json-reader-set-up").start(() -> {
                try {
                    read("[0]");
                } catch (JsonProcessingException e) {
                    throw new IllegalStateException("a constant does not parse", e);
                }
            });
        }
    }

    /** The first JSON value of {@code text}, or a missing node when it holds none. */
    static JsonNode read(String text) throws JsonProcessingException {
        try (JsonParser parser = FACTORY.createParser(text)) {
            JsonToken first = parser.nextToken();
            return first == null ? MissingNode.getInstance() : value(parser, first);
        } catch (JsonProcessingException e) {
            throw e;
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a String has no I/O to fail
        }
    }

    // The parser bounds the nesting (StreamReadConstraints), so the recursion is bounded too.
    private static JsonNode value(JsonParser parser, JsonToken token) throws IOException {
        return switch (token) {
            case START_OBJECT -> {
                ObjectNode object = object();
                for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
                    object.set(name, value(parser, parser.nextToken()));
                }
                yield object;
            }
            case START_ARRAY -> {
                ArrayNode array = NODES.arrayNode();
                for (JsonToken next = parser.nextToken(); next != JsonToken.END_ARRAY; next = parser.nextToken()) {
                    array.add(value(parser, next));
                }
                yield array;
            }
            case VALUE_STRING -> NODES.textNode(parser.getText());
            case VALUE_NUMBER_INT -> switch (parser.getNumberType()) {
                case INT -> NODES.numberNode(parser.getIntValue());
                case LONG -> NODES.numberNode(parser.getLongValue());
                default -> NODES.numberNode(parser.getBigIntegerValue());
            };
            case VALUE_NUMBER_FLOAT -> NODES.numberNode(parser.getDoubleValue());
            case VALUE_TRUE -> NODES.booleanNode(true);
            case VALUE_FALSE -> NODES.booleanNode(false);
            case VALUE_NULL -> NODES.nullNode();
            default -> throw new JsonParseException(parser, "unexpected " + token);
        };
    }

    /** {@code node} as compact JSON in UTF-8, as {@code ObjectMapper.writeValueAsBytes} writes it. */
    static byte[] bytes(JsonNode node) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator generator = FACTORY.createGenerator(out)) {
            write(generator, node);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // memory has no I/O to fail
        }
        return out.toByteArray();
    }

    // A node's own serialize wants a mapper's serializer provider (a null node asks it how to write null).
    private static void write(JsonGenerator generator, JsonNode node) throws IOException {
        switch (node.getNodeType()) {
            case OBJECT -> {
                generator.writeStartObject();
                for (Map.Entry<String, JsonNode> field : node.properties()) {
                    generator.writeFieldName(field.getKey());
                    write(generator, field.getValue());
                }
                generator.writeEndObject();
            }
            case ARRAY -> {
                generator.writeStartArray();
                for (JsonNode item : node) {
                    write(generator, item);
                }
                generator.writeEndArray();
            }
            case STRING -> generator.writeString(node.textValue());
            case NUMBER -> {
                switch (node.numberType()) {
                    case INT -> generator.writeNumber(node.intValue());
                    case LONG -> generator.writeNumber(node.longValue());
                    case BIG_INTEGER -> generator.writeNumber(node.bigIntegerValue());
                    case FLOAT -> generator.writeNumber(node.floatValue());
                    case DOUBLE -> generator.writeNumber(node.doubleValue());
                    case BIG_DECIMAL -> generator.writeNumber(node.decimalValue());
                }
            }
            case BOOLEAN -> generator.writeBoolean(node.booleanValue());
            case NULL -> generator.writeNull();
            // a missing, binary or Java-object node: the CLI builds none of them into what it sends
            default -> throw new IllegalArgumentException("not a JSON value: " + node.getNodeType());
        }
    }
}
