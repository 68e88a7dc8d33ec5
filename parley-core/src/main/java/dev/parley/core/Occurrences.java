package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.zone.ZoneOffsetTransition;
import java.util.List;
import java.util.Optional;

/**
 * When a cron expression fires in a time zone. The expression names wall-clock times
 * ({@link Recurrence}); each fires at one instant:
 * <ul>
 *   <li>a time the zone skips (spring forward: 02:30 on the day clocks jump from 02:00 to
 *       03:00) fires shifted forward by the length of the gap (03:30), as java.time resolves it;</li>
 *   <li>a time the zone repeats (autumn: 01:30 happens twice) fires once, at its first
 *       (earlier-offset) instance.</li>
 * </ul>
 * So every wall-clock time the expression names fires at most once, and a time shifted out of
 * a gap onto one the expression names too (02:30 → 03:30 under {@code *}{@code /30}) is one
 * firing. The cron library's own zone arithmetic is not used: it drops the 02:30 of the
 * spring-forward day altogether and fires a {@code *}{@code /30} job through the repeated hour
 * twice (cron-utils 9.2.1). Here it only matches wall-clock times.
 */
public record Occurrences(Recurrence recurrence, ZoneId zone) {
    /**
     * How far back a pass looks for the latest missed firing before it walks from the first one
     * due: a dense expression has one in the last day, a sparse one in the last year.
     */
    private static final List<Duration> LOOKBACKS = List.of(Duration.ofDays(1), Duration.ofDays(8), Duration.ofDays(32),
            Duration.ofDays(367));

    /** The instant the wall-clock time {@code local} of {@code zone} stands for: a gap time shifted on, a repeated time's first. */
    public static Instant resolve(LocalDateTime local, ZoneId zone) {
        return ZonedDateTime.of(local, zone).toInstant();
    }

    /** The first firing strictly after {@code after}; empty when the expression names no later time. */
    public Optional<Instant> next(Instant after) {
        // A wall-clock time in a gap that ended just before `after` fires after it, shifted
        // forward: the search starts that far back.
        LocalDateTime cursor = LocalDateTime.ofInstant(after, zone).minus(gapEndingAfter(after));
        Optional<Instant> best = Optional.empty();
        LocalDateTime limit = LocalDateTime.MAX;
        while (true) {
            Optional<LocalDateTime> time = recurrence.after(cursor);
            if (time.isEmpty() || !time.get().isBefore(limit)) {
                return best;
            }
            cursor = time.get();
            Instant at = resolve(cursor, zone);
            if (at.isAfter(after) && (best.isEmpty() || at.isBefore(best.get()))) {
                best = Optional.of(at);
                // Only a time shifted out of a gap can be passed by later times, those within its shift.
                limit = cursor.plus(shift(cursor));
            }
        }
    }

    /**
     * The latest firing at or before {@code now}, counting from {@code due} (a firing at or
     * before {@code now}): the one that stands for all those a hub that was down, or late,
     * missed.
     */
    public Instant latest(Instant due, Instant now) {
        Instant latest = due;
        for (Duration lookback : LOOKBACKS) {
            Instant from = now.minus(lookback);
            if (!from.isAfter(latest)) {
                break;
            }
            Optional<Instant> recent = next(from);
            if (recent.isPresent() && !recent.get().isAfter(now)) {
                latest = recent.get();
                break;
            }
        }
        for (Optional<Instant> later = next(latest); later.isPresent() && !later.get().isAfter(now); later = next(latest)) {
            latest = later.get();
        }
        return latest;
    }

    /** The length of the gap the zone's last transition at or before {@code at} opened, if {@code at} is within it of the jump. */
    private Duration gapEndingAfter(Instant at) {
        ZoneOffsetTransition last = zone.getRules().previousTransition(at.plusNanos(1));
        if (last == null || !last.isGap() || !at.isBefore(last.getInstant().plus(last.getDuration()))) {
            return Duration.ZERO;
        }
        return last.getDuration();
    }

    /** How far {@link #resolve} moves {@code local}: the gap's length for a time the zone skips, else nothing. */
    private Duration shift(LocalDateTime local) {
        ZoneOffsetTransition transition = zone.getRules().getTransition(local);
        return transition != null && transition.isGap() ? transition.getDuration() : Duration.ZERO;
    }
}
