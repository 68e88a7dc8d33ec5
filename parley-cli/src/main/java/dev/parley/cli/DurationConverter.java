package dev.parley.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads durations the way people type them: {@code 500ms}, {@code 90s}, {@code 10m}, {@code 2h}, {@code 7d}, or ISO {@code PT10M}. */
final class DurationConverter implements ITypeConverter<Duration> {
    private static final Pattern SHORT = Pattern.compile("(\\d+)(ms|s|m|h|d)");

    @Override
    public Duration convert(String value) {
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
                throw new TypeConversionException("'" + value + "' is not a duration (e.g. 90s, 10m, 2h, 7d)");
            }
        }
        if (duration.isZero() || duration.isNegative()) {
            throw new TypeConversionException("'" + value + "' must be longer than zero");
        }
        return duration;
    }
}
