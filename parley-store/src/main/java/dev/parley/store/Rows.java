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
    /** The position of the first column a query selects after {@link #ENVELOPE_COLUMNS}. */
    static final int AFTER_ENVELOPE = 19;

    private Rows() {
    }

    static Envelope envelope(ResultSet rs) throws SQLException {
        return new Envelope(rs.getString(1), rs.getLong(2), new NodeId(rs.getString(3)), new NodeId(rs.getString(4)),
                rs.getString(5), Optional.ofNullable(rs.getString(6)),
                Optional.ofNullable(rs.getString(7)).map(JsonText::new), Optional.ofNullable(rs.getString(8)),
                Optional.ofNullable(rs.getString(9)), Optional.ofNullable(rs.getString(16)),
                Optional.ofNullable(rs.getString(10)),
                stringMap(rs.getString(11)), Instant.ofEpochMilli(rs.getLong(12)),
                new Trace(rs.getInt(13), Route.parse(rs.getString(14)), rs.getString(15),
                        Optional.ofNullable(rs.getString(17)), TraceContext.fromStored(rs.getString(18), rs.getString(1))));
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
