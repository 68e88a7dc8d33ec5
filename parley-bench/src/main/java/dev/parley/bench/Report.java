package dev.parley.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a bench scenario prints: a title, a two-column table ("metric", "value") for people
 * and, with {@code --json}, one JSON object on the last line of stdout for scripts. Rows
 * and JSON fields are added independently, so the table can say "15.8 / 51.3 ms" while the
 * JSON carries {@code p50Ms} and {@code p99Ms}.
 */
public final class Report {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String title;
    private final List<String[]> rows = new ArrayList<>();
    private final Map<String, Object> json = new LinkedHashMap<>();
    private int width = 34;

    public Report(String title) {
        this.title = title;
    }

    /** A table row. */
    public Report row(String metric, String value) {
        rows.add(new String[] {metric, value});
        width = Math.max(width, metric.length());
        return this;
    }

    /** A formatted table row. */
    public Report row(String metric, String format, Object... args) {
        return row(metric, String.format(Locale.ROOT, format, args));
    }

    /** A JSON field; doubles are rounded to three decimals (NaN becomes null). */
    public Report put(String key, Object value) {
        json.put(key, value instanceof Double d ? BenchSupport.round(d) : value);
        return this;
    }

    /** The JSON fields so far (a nested object may be added with {@link #put}). */
    public Map<String, Object> json() {
        return json;
    }

    /** Prints the title and table, and the JSON object as the last line when {@code withJson}. */
    public void print(PrintWriter out, boolean withJson) {
        out.println(title);
        out.printf(Locale.ROOT, "  %-" + width + "s %s%n", "metric", "value");
        for (String[] r : rows) {
            out.printf(Locale.ROOT, "  %-" + width + "s %s%n", r[0], r[1]);
        }
        if (withJson) {
            out.println(toJson(json));
        }
        out.flush();
    }

    /** One line of JSON. */
    public static String toJson(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
