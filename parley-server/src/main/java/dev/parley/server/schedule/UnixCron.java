package dev.parley.server.schedule;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import dev.parley.core.Recurrence;
import dev.parley.core.Recurrences;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;

/**
 * Five-field Unix cron expressions, read by cron-utils. It only matches wall-clock times: they
 * are given to it at UTC, which never skips or repeats an hour, and the core's
 * {@link dev.parley.core.Occurrences} places them in the schedule's zone. The finest an
 * expression can name is a minute, so no schedule fires more often than once a minute.
 */
public final class UnixCron implements Recurrences {
    /** Longer than any useful expression; keeps what is stored and echoed small. */
    private static final int MAX_LENGTH = 200;
    private static final CronParser PARSER = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
    private static final String LIBRARY_PREFIX = "Failed to parse cron expression. ";

    @Override
    public Recurrence parse(String expression) {
        if (expression.isBlank() || expression.length() > MAX_LENGTH) {
            throw invalid(expression, "a cron expression has five fields (minute hour day-of-month month day-of-week)"
                    + " and at most " + MAX_LENGTH + " characters");
        }
        ExecutionTime times;
        try {
            times = ExecutionTime.forCron(PARSER.parse(expression));
        } catch (RuntimeException e) {
            throw invalid(expression, reason(e));
        }
        return after -> times.nextExecution(after.atZone(ZoneOffset.UTC)).map(ZonedDateTime::toLocalDateTime);
    }

    /** The library's reason, in the words a sender can act on. */
    private static String reason(RuntimeException e) {
        String message = e.getMessage();
        if (message == null || message.isBlank()) {
            return "not a five-field Unix cron expression (minute hour day-of-month month day-of-week)";
        }
        return message.startsWith(LIBRARY_PREFIX) ? message.substring(LIBRARY_PREFIX.length()) : message;
    }

    private static ParleyException invalid(String expression, String why) {
        String shown = expression.length() > 60 ? expression.substring(0, 60) + "…" : expression;
        return new ParleyException(ErrorCode.INVALID_REQUEST, "field 'cron' (\"" + shown + "\") does not parse: " + why);
    }
}
