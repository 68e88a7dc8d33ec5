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
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
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
    /** The days {@link #time} writes digit by digit: years 0 to 9999, four digits each. */
    private static final long MIN_FAST_DAY = LocalDate.of(0, 1, 1).toEpochDay();
    private static final long MAX_FAST_DAY = LocalDate.of(9999, 12, 31).toEpochDay();

    private Json() {
    }

    /**
     * RFC 3339 in UTC with milliseconds, as every time on the wire is. Written digit by digit for
     * years 0–9999 (every stream frame and answer has one, and the formatter's zone rules were a
     * visible share of a replay's CPU); the formatter takes the rest.
     */
    public static String time(Instant instant) {
        long millis = instant.toEpochMilli();
        long days = Math.floorDiv(millis, 86_400_000L);
        if (days < MIN_FAST_DAY || days > MAX_FAST_DAY) {
            return TIME.format(instant);
        }
        LocalDate date = LocalDate.ofEpochDay(days);
        int ofDay = (int) Math.floorMod(millis, 86_400_000L);
        byte[] out = new byte[24];
        digits(out, 0, date.getYear(), 4);
        out[4] = '-';
        digits(out, 5, date.getMonthValue(), 2);
        out[7] = '-';
        digits(out, 8, date.getDayOfMonth(), 2);
        out[10] = 'T';
        digits(out, 11, ofDay / 3_600_000, 2);
        out[13] = ':';
        digits(out, 14, ofDay / 60_000 % 60, 2);
        out[16] = ':';
        digits(out, 17, ofDay / 1000 % 60, 2);
        out[19] = '.';
        digits(out, 20, ofDay % 1000, 3);
        out[23] = 'Z';
        return new String(out, StandardCharsets.US_ASCII);
    }

    private static void digits(byte[] out, int at, int value, int width) {
        for (int i = at + width - 1; i >= at; i--) {
            out[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
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
