package dev.parley.core;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations the way people type them: {@code 500ms}, {@code 90s}, {@code 10m}, {@code 2h}, {@code 7d}, or ISO {@code PT10M}. */
public final class DurationText {
    private static final Pattern SHORT = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");

    private DurationText() {
    }

    /** The duration {@code value} says; throws {@link IllegalArgumentException} saying why when it says none longer than zero. */
    public static Duration parse(String value) {
        Matcher m = SHORT.matcher(value.strip().toLowerCase(Locale.ROOT));
        Duration duration;
        if (m.matches()) {
            long amount = Long.parseLong(m.group(1));
            duration = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
        } else {
            try {
                duration = Duration.parse(value.strip());
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("'" + value + "' is not a duration (e.g. 90s, 10m, 2h, 7d)");
            }
        }
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException("'" + value + "' must be longer than zero");
        }
        return duration;
    }

    /** {@code duration} as people read it and {@link #parse} takes it back: {@code 30m}, {@code 61s}, {@code 250ms}. */
    public static String format(Duration duration) {
        if (duration.toMillis() < 1_000) {
            return duration.toMillis() + "ms";
        }
        long seconds = duration.toSeconds();
        return seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
    }
}
