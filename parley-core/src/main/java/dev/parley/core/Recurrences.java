package dev.parley.core;

/**
 * Reads cron expressions: five fields (minute, hour, day of month, month, day of week) as Unix
 * cron has them. A port, so that the core names no cron library.
 */
public interface Recurrences {
    /**
     * The expression read; {@link ErrorCode#INVALID_REQUEST} naming the field {@code cron} and
     * what is wrong when it does not parse.
     */
    Recurrence parse(String expression);
}
