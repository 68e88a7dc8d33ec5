package dev.parley.server.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Envelope;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.Optional;

/** The JSON shapes of the wire: one mapper, one time format, one envelope encoding. */
public final class Json {
    /**
     * Jackson's buffers come from one bounded pool shared by all threads. Its default pool is
     * per thread: every virtual thread (each request, each SSE stream) would allocate its own,
     * and an open stream would keep its 16 KB for life once it had written a frame.
     */
    public static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .recyclerPool(JsonRecyclerPools.sharedBoundedPool()).build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
    private static final JsonFactory FACTORY = MAPPER.getFactory();
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);

    private Json() {
    }

    public static String time(Instant instant) {
        return TIME.format(instant);
    }

    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    public static ArrayNode array() {
        return MAPPER.createArrayNode();
    }

    public static byte[] bytes(Object tree) {
        try {
            return MAPPER.writeValueAsBytes(tree);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The envelope as one line of JSON, {@code data} embedded as the sender wrote it. */
    public static byte[] envelope(Envelope e) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + e.text().map(String::length).orElse(0));
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            writeEnvelope(g, e);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return out.toByteArray();
    }

    public static ObjectNode envelopeTree(Envelope e) {
        try {
            return (ObjectNode) MAPPER.readTree(envelope(e));
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static void writeEnvelope(JsonGenerator g, Envelope e) throws IOException {
        g.writeStartObject();
        g.writeStringField("id", e.id());
        g.writeNumberField("seq", e.seq());
        g.writeStringField("from", e.from().value());
        g.writeStringField("to", e.to().value());
        g.writeStringField("kind", e.kind());
        optional(g, "text", e.text());
        g.writeFieldName("data");
        if (e.data().isPresent()) {
            g.writeRawValue(e.data().get().json());
        } else {
            g.writeNull();
        }
        optional(g, "corrId", e.corrId());
        optional(g, "threadId", e.threadId());
        if (e.topic().isPresent()) {
            g.writeStringField("topic", e.topic().get());
        }
        g.writeObjectFieldStart("meta");
        for (Map.Entry<String, String> entry : e.meta().entrySet()) {
            g.writeStringField(entry.getKey(), entry.getValue());
        }
        g.writeEndObject();
        g.writeStringField("createdAt", time(e.createdAt()));
        g.writeObjectFieldStart("trace");
        g.writeNumberField("attempt", e.trace().attempt());
        g.writeStringField("route", e.trace().route().wire());
        g.writeStringField("policyVersion", e.trace().policyVersion());
        if (e.trace().rule().isPresent()) {
            g.writeStringField("rule", e.trace().rule().get());
        }
        g.writeStringField("traceId", e.trace().context().traceId());
        g.writeStringField("traceparent", e.trace().context().traceparent());
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void optional(JsonGenerator g, String field, Optional<String> value) throws IOException {
        if (value.isPresent()) {
            g.writeStringField(field, value.get());
        } else {
            g.writeNullField(field);
        }
    }
}
