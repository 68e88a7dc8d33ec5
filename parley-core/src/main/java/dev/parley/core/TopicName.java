package dev.parley.core;

import java.util.regex.Pattern;

/** A topic's name: {@code ^[a-z0-9][a-z0-9._-]{0,127}$}. */
public record TopicName(String value) {
    private static final Pattern PATTERN = Pattern.compile("^[a-z0-9][a-z0-9._-]{0,127}$");

    public TopicName {
        if (value == null || !PATTERN.matcher(value).matches()) {
            throw new ParleyException(ErrorCode.INVALID_TOPIC, "topic names must match ^[a-z0-9][a-z0-9._-]{0,127}$");
        }
    }

    public static TopicName of(String value) {
        return new TopicName(value);
    }

    @Override
    public String toString() {
        return value;
    }
}
