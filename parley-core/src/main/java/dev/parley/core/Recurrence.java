package dev.parley.core;

import java.time.LocalDateTime;
import java.util.Optional;

/**
 * A cron expression read: the wall-clock times it names, in no time zone. {@link Occurrences}
 * places them in a zone.
 */
public interface Recurrence {
    /** The first wall-clock time strictly after {@code time} that the expression names; empty when none comes. */
    Optional<LocalDateTime> after(LocalDateTime time);
}
