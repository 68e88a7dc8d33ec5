package dev.parley.server.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Envelope;
import dev.parley.core.Route;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
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
    private static final SerializableString ID = new SerializedString("id");
    private static final SerializableString SEQ = new SerializedString("seq");
    private static final SerializableString FROM = new SerializedString("from");
    private static final SerializableString TO = new SerializedString("to");
    private static final SerializableString KIND = new SerializedString("kind");
    private static final SerializableString TEXT = new SerializedString("text");
    private static final SerializableString DATA = new SerializedString("data");
    private static final SerializableString CORR_ID = new SerializedString("corrId");
    private static final SerializableString THREAD_ID = new SerializedString("threadId");
    private static final SerializableString TOPIC = new SerializedString("topic");
    private static final SerializableString META = new SerializedString("meta");
    private static final SerializableString CREATED_AT = new SerializedString("createdAt");
    private static final SerializableString TRACE = new SerializedString("trace");
    private static final SerializableString ATTEMPT = new SerializedString("attempt");
    private static final SerializableString ROUTE = new SerializedString("route");
    private static final SerializableString POLICY_VERSION = new SerializedString("policyVersion");
    private static final SerializableString RULE = new SerializedString("rule");
    private static final SerializableString TRACE_ID = new SerializedString("traceId");
    private static final SerializableString TRACEPARENT = new SerializedString("traceparent");
    /** Each route's wire name, encoded once, by the route's ordinal. */
    private static final SerializableString[] ROUTES = Arrays.stream(Route.values())
            .map(route -> new SerializedString(route.wire())).toArray(SerializableString[]::new);
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
        return new String(timeBytes(instant), StandardCharsets.US_ASCII);
    }

    /** {@link #time}'s ASCII bytes. */
    private static byte[] timeBytes(Instant instant) {
        long millis = instant.toEpochMilli();
        long days = Math.floorDiv(millis, 86_400_000L);
        if (days < MIN_FAST_DAY || days > MAX_FAST_DAY) {
            return TIME.format(instant).getBytes(StandardCharsets.US_ASCII);
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
        return out;
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
            envelope(g, e);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return out.toByteArray();
    }

    /**
     * A generator for envelopes in a row, each written by {@link #envelope(JsonGenerator, Envelope)}
     * after raw text of the caller's (an SSE frame's lines): nothing goes between them but that text.
     */
    public static JsonGenerator generator(OutputStream out) {
        try {
            JsonGenerator g = FACTORY.createGenerator(out);
            g.setRootValueSeparator(null);
            return g;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static ObjectNode envelopeTree(Envelope e) {
        try {
            return (ObjectNode) MAPPER.readTree(envelope(e));
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Writes the envelope's JSON; the field names go out pre-encoded, as every frame repeats them. */
    public static void envelope(JsonGenerator g, Envelope e) throws IOException {
        g.writeStartObject();
        g.writeFieldName(ID);
        string(g, e.id());
        g.writeFieldName(SEQ);
        g.writeNumber(e.seq());
        g.writeFieldName(FROM);
        ascii(g, e.from().value());
        g.writeFieldName(TO);
        ascii(g, e.to().value());
        g.writeFieldName(KIND);
        string(g, e.kind());
        optional(g, TEXT, e.text());
        g.writeFieldName(DATA);
        if (e.data().isPresent()) {
            g.writeRawValue(e.data().get().json());
        } else {
            g.writeNull();
        }
        optional(g, CORR_ID, e.corrId());
        optional(g, THREAD_ID, e.threadId());
        if (e.topic().isPresent()) {
            g.writeFieldName(TOPIC);
            string(g, e.topic().get());
        }
        g.writeFieldName(META);
        g.writeStartObject();
        for (Map.Entry<String, String> entry : e.meta().entrySet()) {
            g.writeFieldName(entry.getKey());
            string(g, entry.getValue());
        }
        g.writeEndObject();
        g.writeFieldName(CREATED_AT);
        ascii(g, timeBytes(e.createdAt()));
        g.writeFieldName(TRACE);
        g.writeStartObject();
        g.writeFieldName(ATTEMPT);
        g.writeNumber(e.trace().attempt());
        g.writeFieldName(ROUTE);
        g.writeString(ROUTES[e.trace().route().ordinal()]);
        g.writeFieldName(POLICY_VERSION);
        string(g, e.trace().policyVersion());
        if (e.trace().rule().isPresent()) {
            g.writeFieldName(RULE);
            string(g, e.trace().rule().get());
        }
        g.writeFieldName(TRACE_ID);
        ascii(g, e.trace().context().traceId());
        g.writeFieldName(TRACEPARENT);
        ascii(g, e.trace().context().traceparent());
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void optional(JsonGenerator g, SerializableString field, Optional<String> value) throws IOException {
        g.writeFieldName(field);
        if (value.isPresent()) {
            string(g, value.get());
        } else {
            g.writeNull();
        }
    }

    /**
     * A string value. Printable ASCII without a quote or a backslash, which JSON writes as is, is
     * copied as its bytes: Jackson checks and copies it char by char, and an envelope's text that
     * way was most of a frame's encoding. Anything else Jackson escapes, as it always did; so does
     * a string with a {@code ?}, which is also what the UTF-8 encoder puts for a lone surrogate.
     */
    private static void string(JsonGenerator g, String value) throws IOException {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        if (plain(utf8)) {
            g.writeRawUTF8String(utf8, 0, utf8.length);
        } else {
            g.writeString(value);
        }
    }

    /**
     * A string value that its type holds to printable ASCII without a quote or a backslash (a
     * node id, a trace's hex ids): its bytes go out unchecked. Without {@link #string}'s check of
     * these, a replayed frame's encoding took 515 ns against 595 (BENCHMARKS.md, stop 58).
     */
    private static void ascii(JsonGenerator g, String value) throws IOException {
        ascii(g, value.getBytes(StandardCharsets.US_ASCII));
    }

    private static void ascii(JsonGenerator g, byte[] ascii) throws IOException {
        g.writeRawUTF8String(ascii, 0, ascii.length);
    }

    /**
     * No byte JSON escapes (a control character, a quote, a backslash), none past ASCII and no
     * {@code ?}. Eight bytes at a time ({@link ByteLanes}): any flagged lane, or a byte's own top
     * bit, says no.
     */
    private static boolean plain(byte[] utf8) {
        int i = 0;
        for (; i + Long.BYTES <= utf8.length; i += Long.BYTES) {
            long x = ByteLanes.at(utf8, i);
            long flagged = (x & ByteLanes.TOPS) | ByteLanes.below(x, ' ') | ByteLanes.zero(x ^ ByteLanes.each('"'))
                    | ByteLanes.zero(x ^ ByteLanes.each('\\')) | ByteLanes.zero(x ^ ByteLanes.each('?'));
            if (flagged != 0) {
                return false;
            }
        }
        for (; i < utf8.length; i++) {
            if (utf8[i] < ' ' || utf8[i] == '"' || utf8[i] == '\\' || utf8[i] == '?') {
                return false;
            }
        }
        return true;
    }
}
