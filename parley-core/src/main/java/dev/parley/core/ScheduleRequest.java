package dev.parley.core;

import java.util.Optional;

/**
 * A send to fire later: at {@code deliverAt} or on {@code cron} (exactly one of them), read in
 * {@code timeZone} (an IANA name; the recipient's {@code timezone} label when absent, else UTC).
 * The texts are as the sender wrote them: {@link Schedules} reads them, so that a refusal is
 * audited.
 */
public record ScheduleRequest(SendRequest send, Optional<String> deliverAt, Optional<String> cron,
                              Optional<String> timeZone) {
}
