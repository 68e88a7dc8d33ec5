package dev.parley.store;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.core.Envelope;
import dev.parley.core.JsonText;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.core.TraceContext;

import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/** Translation between domain values and SQLite columns. */
final class Rows {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() { };

    static final String ENVELOPE_COLUMNS = "id, seq, from_node, to_node, kind, text, data, corr_id, thread_id, "
            + "message_id, meta, created_at, attempt, route, policy_version, topic, rule, trace_context";
    /** {@link #ENVELOPE_COLUMNS} of the table named {@code e} in a join. */
    static final String ENVELOPE_COLUMNS_OF_E = "e." + ENVELOPE_COLUMNS.replace(", ", ", e.");
    /** The position of the first column a query selects after {@link #ENVELOPE_COLUMNS}. */
    static final int AFTER_ENVELOPE = 19;
    /** The positions of {@link #ENVELOPE_COLUMNS} that hold text: all but seq, created_at and attempt. */
    private static final int[] TEXT_COLUMNS = {1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15, 16, 17, 18};

    private Rows() {
    }

    static Envelope envelope(ResultSet rs) throws SQLException {
        // The text columns are read in one loop rather than at fifteen call sites: the JIT inlined
        // each read (the driver's column access and the UTF-8 decoding) fifteen times over, 56 KB
        // of compiled code that took C2 about half a second, in the first replay after a start.
        String[] text = new String[AFTER_ENVELOPE];
        for (int column : TEXT_COLUMNS) {
            text[column] = text(rs, column);
        }
        String id = text[1];
        return new Envelope(id, rs.getLong(2), new NodeId(text[3]), new NodeId(text[4]), text[5],
                Optional.ofNullable(text[6]), Optional.ofNullable(text[7]).map(JsonText::new),
                Optional.ofNullable(text[8]), Optional.ofNullable(text[9]), Optional.ofNullable(text[16]),
                Optional.ofNullable(text[10]), stringMap(text[11]), Instant.ofEpochMilli(rs.getLong(12)),
                new Trace(rs.getInt(13), Route.parse(text[14]), text[15], Optional.ofNullable(text[17]),
                        TraceContext.fromStored(text[18], id)));
    }

    /**
     * A text column as {@link ResultSet#getString} reads it, {@code null} for NULL: its UTF-8 bytes
     * (the database's encoding, SQLite's default) decoded here. getString wraps each value in a
     * direct buffer before it copies it out: a replay's rows took 3.5 µs each that way, 2.4 µs this way.
     */
    static String text(ResultSet rs, int column) throws SQLException {
        byte[] utf8 = rs.getBytes(column);
        return utf8 == null ? null : new String(utf8, StandardCharsets.UTF_8);
    }

    static String json(Map<String, String> map) {
        if (map.isEmpty()) {
            return null;
        }
        try {
            return JSON.writeValueAsString(map);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a string map always serializes", e);
        }
    }

    /**
     * {@code values}, each as its {@code text}, as a JSON array of strings for {@code json_each(?)}. Each
     * string quoted by Jackson's encoder, without a tree or a writer: the delivery marks build one
     * in every writer job, and serializing a tree was a sixth of the writer's time.
     */
    static <T> String jsonArray(Collection<T> values, Function<T, String> text) {
        StringBuilder out = new StringBuilder(2 + values.size() * 40).append('[');
        for (T value : values) {
            if (out.length() > 1) {
                out.append(',');
            }
            out.append('"');
            JsonStringEncoder.getInstance().quoteAsString(text.apply(value), out);
            out.append('"');
        }
        return out.append(']').toString();
    }

    static Map<String, String> stringMap(String json) throws SQLException {
        if (json == null) {
            return Map.of();
        }
        try {
            return JSON.readValue(json, STRING_MAP);
        } catch (JsonProcessingException e) {
            throw new SQLException("stored map is not JSON: " + e.getMessage(), e);
        }
    }

    static void setNullable(PreparedStatement statement, int index, Optional<?> value) throws SQLException {
        if (value.isPresent()) {
            statement.setString(index, value.get().toString());
        } else {
            statement.setNull(index, Types.VARCHAR);
        }
    }

    static void setNullableMillis(PreparedStatement statement, int index, Optional<Instant> value) throws SQLException {
        if (value.isPresent()) {
            statement.setLong(index, value.get().toEpochMilli());
        } else {
            statement.setNull(index, Types.INTEGER);
        }
    }

    /** An epoch-milliseconds column that may be NULL. */
    static Optional<Instant> optionalMillis(ResultSet rs, int index) throws SQLException {
        long millis = rs.getLong(index);
        return rs.wasNull() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(millis));
    }
}
