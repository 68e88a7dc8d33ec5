package dev.parley.server.wire;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Every time on the wire is RFC 3339 UTC with milliseconds, whichever way {@link Json#time} writes it. */
class JsonTimeTest {
    private static final DateTimeFormatter REFERENCE = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);

    /** Edges (epoch, leap days, year and century ends, the fast range's ends and past them) and seeded random times. */
    static Stream<Instant> instants() {
        Random random = new Random(20261128);
        Stream<Instant> edges = Stream.of("1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z", "2024-02-29T12:00:00.001Z",
                "2000-02-29T23:59:59.999Z", "1900-03-01T00:00:00Z", "2026-12-31T23:59:59.999Z", "0000-01-01T00:00:00Z",
                "9999-12-31T23:59:59.999Z", "+10000-01-01T00:00:00Z", "-0001-12-31T23:59:59.999Z")
                .map(Instant::parse);
        Stream<Instant> seeded = Stream.generate(() -> Instant.ofEpochMilli(
                random.nextLong(-62_167_219_200_000L, 253_402_300_799_999L))).limit(300);
        Stream<Instant> nanos = Stream.of(Instant.parse("2026-11-28T06:00:00.123456789Z")); // millis only, truncated
        return Stream.of(edges, seeded, nanos).flatMap(s -> s);
    }

    @ParameterizedTest
    @MethodSource("instants")
    void writesWhatTheFormatterWrites(Instant instant) {
        assertEquals(REFERENCE.format(instant), Json.time(instant));
    }
}
