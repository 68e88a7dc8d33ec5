package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One envelope as Claude Code's {@code notifications/claude/channel}: {@code content} is the
 * text (the data as JSON when there is no text), and {@code meta} carries {@code from},
 * {@code id}, {@code kind}, {@code corr_id}, {@code thread_id} and {@code topic} as string
 * attributes of the {@code <channel>} tag. Absent fields are left out; keys are letters,
 * digits and underscores only, which is what the channel contract accepts.
 */
public final class ChannelNotification {
    public static final String METHOD = "notifications/claude/channel";

    private static final Pattern META_KEY = Pattern.compile("^[A-Za-z0-9_]+$");

    /** meta key → envelope field. */
    private static final Map<String, String> META = orderedMeta();

    private ChannelNotification() {
    }

    /** The notification's params for {@code envelope} (the hub's envelope JSON). */
    public static Map<String, Object> params(JsonNode envelope) {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("content", content(envelope));
        params.put("meta", meta(envelope));
        return params;
    }

    /** The text, else the data as compact JSON, else empty. */
    public static String content(JsonNode envelope) {
        JsonNode text = envelope.path("text");
        if (text.isTextual()) {
            return text.textValue();
        }
        JsonNode data = envelope.path("data");
        return data.isMissingNode() || data.isNull() ? "" : McpJson.text(data);
    }

    static Map<String, String> meta(JsonNode envelope) {
        Map<String, String> meta = new LinkedHashMap<>();
        META.forEach((key, field) -> {
            JsonNode value = envelope.path(field);
            if (value.isValueNode() && !value.isNull() && META_KEY.matcher(key).matches()) {
                meta.put(key, value.asText());
            }
        });
        return meta;
    }

    private static Map<String, String> orderedMeta() {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("from", "from");
        meta.put("id", "id");
        meta.put("kind", "kind");
        meta.put("corr_id", "corrId");
        meta.put("thread_id", "threadId");
        meta.put("topic", "topic");
        return meta;
    }
}
