package dev.parley.server.schedule;

import dev.parley.core.ErrorCode;
import dev.parley.core.Occurrences;
import dev.parley.core.ParleyException;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Cron expressions (read by {@link UnixCron}) placed in time zones by the core's
 * {@link Occurrences}, without a hub: the edge cases of gaps and overlaps that the hub tests
 * do not walk through, and the latest of many missed firings.
 */
class OccurrencesTest {
    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private final UnixCron cron = new UnixCron();

    @Test
    void everyTimeNamedInASpringGapFiresShiftedByTheGapAndOnceWhereItMeetsAnother() {
        // 02:00 and 02:30 do not exist on 2026-03-08 in New York: they fire at 03:00 and 03:30 EDT,
        // which the expression names as well; each of those instants fires once, then the next day's 01:00.
        assertEquals(List.of("2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z",
                        "2026-03-09T05:00:00Z"),
                firings("0,30 1-3 * * *", NEW_YORK, "2026-03-08T06:00:00Z", 4));
        // only the gap's times: both still fire, in their order
        assertEquals(List.of("2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z", "2026-03-09T06:00:00Z"),
                firings("0,30 2 * * *", NEW_YORK, "2026-03-08T06:00:00Z", 3));
        // looking from the instant 02:00 fired at (03:00 EDT), 02:30 still comes, at 03:30
        assertEquals(List.of("2026-03-08T07:30:00Z"), firings("0,30 2 * * *", NEW_YORK, "2026-03-08T07:00:00Z", 1));
    }

    @Test
    void aTimeTheAutumnRepeatsFiresAtItsFirstInstanceOnly() {
        assertEquals(List.of("2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T07:00:00Z"),
                firings("*/30 * * * *", NEW_YORK, "2026-11-01T04:40:00Z", 3), "01:00 and 01:30 EST are not repeated");
        // from inside the second 01:xx hour, 01:30 has passed already (at its first instance): tomorrow's
        assertEquals(List.of("2026-11-02T06:30:00Z"), firings("30 1 * * *", NEW_YORK, "2026-11-01T06:10:00Z", 1));
        assertEquals(List.of("2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"),
                firings("30 2 * * *", BERLIN, "2026-10-24T10:00:00Z", 2));
    }

    @Test
    void aDayTheZoneSkipsWholeFiresItsTimeOnceTheDayAfter() {
        // Samoa moved across the date line: 2011-12-30 did not happen in Pacific/Apia.
        assertEquals(List.of("2011-12-29T22:00:00Z", "2011-12-30T22:00:00Z"),
                firings("0 12 * * *", ZoneId.of("Pacific/Apia"), "2011-12-29T12:00:00Z", 2));
    }

    @Test
    void theLatestMissedFiringStandsForAllOfThem() {
        Occurrences everyMinute = new Occurrences(cron.parse("* * * * *"), BERLIN);
        assertEquals(Instant.parse("2026-05-04T09:30:00Z"), everyMinute.latest(Instant.parse("2026-04-01T00:00:00Z"),
                Instant.parse("2026-05-04T09:30:59Z")));
        Occurrences daily = new Occurrences(cron.parse("0 9 * * *"), ZoneId.of("UTC"));
        assertEquals(Instant.parse("2026-05-04T09:00:00Z"), daily.latest(Instant.parse("2026-05-01T09:00:00Z"),
                Instant.parse("2026-05-04T09:30:00Z")));
        Occurrences yearly = new Occurrences(cron.parse("0 0 1 1 *"), ZoneId.of("UTC"));
        assertEquals(Instant.parse("2026-01-01T00:00:00Z"), yearly.latest(Instant.parse("2020-01-01T00:00:00Z"),
                Instant.parse("2026-05-04T09:30:00Z")));
        assertEquals(Instant.parse("2026-05-04T09:00:00Z"), daily.latest(Instant.parse("2026-05-04T09:00:00Z"),
                Instant.parse("2026-05-04T09:00:00Z")), "nothing missed: the one due");
    }

    @Test
    void expressionsThatDoNotParseOrNeverComeAreSaidSo() {
        for (String bad : List.of("61 * * * *", "* * * *", "* * * * * *", "", "@daily", "0 0 ? * *", "x".repeat(201))) {
            ParleyException e = assertThrows(ParleyException.class, () -> cron.parse(bad), bad);
            assertEquals(ErrorCode.INVALID_REQUEST, e.code());
            assertTrue(e.getMessage().startsWith("field 'cron'"), e.getMessage());
        }
    }

    @Test
    void aTimeNamedNeverHasNoNextFiring() {
        assertEquals(Optional.empty(), new Occurrences(cron.parse("0 0 30 2 *"), BERLIN)
                .next(Instant.parse("2026-01-01T00:00:00Z")));
        assertEquals(Optional.of(LocalDateTime.parse("2026-03-09T09:00")),
                cron.parse("0 9 * * 1-5").after(LocalDateTime.parse("2026-03-06T09:00")), "Monday to Friday");
    }

    private List<String> firings(String expression, ZoneId zone, String from, int count) {
        Occurrences occurrences = new Occurrences(cron.parse(expression), zone);
        List<String> out = new ArrayList<>();
        Instant after = Instant.parse(from);
        for (int i = 0; i < count; i++) {
            after = occurrences.next(after).orElseThrow();
            out.add(after.toString());
        }
        return out;
    }
}
