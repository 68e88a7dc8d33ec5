package dev.parley.core;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.regex.Pattern;

/** When a schedule fires: once, or on every time a cron expression names. */
public sealed interface Timing {

    /**
     * Once, at {@code deliverAt}: an RFC 3339 time with its offset ({@code 2026-03-08T09:00:00-05:00}),
     * or a wall-clock time read in the schedule's zone ({@code 2026-03-08T09:00}), as ISO-8601
     * writes them (seconds only when not zero).
     */
    record Once(String deliverAt) implements Timing {
        private static final Pattern SPACED = Pattern.compile("^(\\d{4}-\\d{2}-\\d{2}) (\\d{2}:)");

        /**
         * {@code text} as a sender may write it — an RFC 3339 time, or a local date and time with
         * {@code T} or a space between them, seconds optional — in its stored form.
         */
        public static Once parse(String text) {
            String iso = SPACED.matcher(text.strip()).replaceFirst("$1T$2");
            try {
                return new Once(OffsetDateTime.parse(iso).truncatedTo(ChronoUnit.MILLIS).toString());
            } catch (DateTimeParseException withoutOffset) {
                try {
                    return new Once(LocalDateTime.parse(iso).truncatedTo(ChronoUnit.MILLIS).toString());
                } catch (DateTimeParseException e) {
                    throw new ParleyException(ErrorCode.INVALID_REQUEST, "deliverAt \"" + text + "\" is neither an RFC 3339"
                            + " time (2026-03-08T09:00:00-05:00) nor a local date and time (2026-03-08 09:00)");
                }
            }
        }

        /** Whether it names a wall-clock time, read in the schedule's zone, rather than an instant. */
        public boolean local() {
            return !deliverAt.endsWith("Z") && !deliverAt.matches(".*[+-]\\d{2}:\\d{2}(:\\d{2})?$");
        }

        /** The instant it stands for, a local time resolved in {@code zone} as {@link Occurrences#resolve} does. */
        public Instant at(ZoneId zone) {
            return local() ? Occurrences.resolve(LocalDateTime.parse(deliverAt), zone)
                    : OffsetDateTime.parse(deliverAt).toInstant();
        }
    }

    /** On each time the 5-field cron expression names, in the schedule's zone ({@link Occurrences}). */
    record Cron(String expression) implements Timing {
    }
}
