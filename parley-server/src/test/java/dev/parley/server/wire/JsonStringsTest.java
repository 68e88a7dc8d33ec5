package dev.parley.server.wire;

import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.core.TraceContext;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** An envelope's strings come out as Jackson writes them, whichever way {@link Json} copies each. */
class JsonStringsTest {
    /**
     * Printable ASCII with {@code ?}, each character JSON escapes, and some past ASCII: the halves
     * of a surrogate pair, which make pairs and lone surrogates.
     */
    private static final String ALPHABET = "ab yZ09/~?\u007f\"\\\n\t\u0000\u001f\u00e9\u2028\u2603\ud83d\ude00";

    /** Seeded random texts, of every length around the eight bytes checked at a time. */
    static Stream<String> texts() {
        Random random = new Random(20261128);
        Stream<String> plain = IntStream.range(0, 40).mapToObj(n -> "p".repeat(n));
        Stream<String> mixed = IntStream.range(0, 400).mapToObj(i -> {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(40);
            for (int c = 0; c < length; c++) {
                text.append(random.nextInt(4) == 0 ? ALPHABET.charAt(random.nextInt(ALPHABET.length())) : 'q');
            }
            return text.toString();
        });
        return Stream.concat(plain, mixed);
    }

    @ParameterizedTest
    @MethodSource("texts")
    void aTextIsWrittenAsJacksonWritesIt(String text) throws Exception {
        String expected = json("T").replace("\"text\":\"T\"",
                "\"text\":" + new String(Json.MAPPER.writeValueAsBytes(text), StandardCharsets.UTF_8));
        assertEquals(expected, json(text));
    }

    /**
     * The fields written unchecked (node ids, the time, the route, the trace's ids) come out as
     * Jackson writes them, for every route, seeded node ids of every char a node id may hold, and
     * times inside and outside the years written digit by digit.
     */
    @ParameterizedTest
    @MethodSource("routes")
    void theFieldsATypeHoldsToAsciiAreWrittenAsJacksonWritesThem(Route route) throws Exception {
        Random random = new Random(route.ordinal());
        String idChars = "abcdefghijklmnopqrstuvwxyz0123456789._-";
        for (int i = 0; i < 50; i++) {
            StringBuilder from = new StringBuilder("n");
            for (int c = random.nextInt(20); c > 0; c--) {
                from.append(idChars.charAt(random.nextInt(idChars.length())));
            }
            Instant at = i % 10 == 0 ? Instant.parse("+12026-12-07T04:20:00.123Z")
                    : Instant.ofEpochMilli(random.nextLong(253_402_300_800_000L));
            TraceContext context = TraceContext.fresh().child();
            Envelope e = new Envelope("0190a4b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b", 7, NodeId.of(from.toString()), NodeId.of("b"),
                    "message", Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                    Optional.empty(), Map.of(), at, new Trace(2, route, "v1", Optional.empty(), context));
            var expected = Json.object();
            expected.put("id", e.id()).put("seq", 7).put("from", from.toString()).put("to", "b").put("kind", "message")
                    .putNull("text").putNull("data").putNull("corrId").putNull("threadId");
            expected.putObject("meta");
            expected.put("createdAt", Json.time(at)); // its digits are JsonTimeTest's
            expected.putObject("trace").put("attempt", 2).put("route", route.wire()).put("policyVersion", "v1")
                    .put("traceId", context.traceId()).put("traceparent", context.traceparent());
            assertEquals(new String(Json.MAPPER.writeValueAsBytes(expected), StandardCharsets.UTF_8),
                    new String(Json.envelope(e), StandardCharsets.UTF_8));
        }
    }

    static Stream<Route> routes() {
        return Stream.of(Route.values());
    }

    private static String json(String text) {
        Envelope e = new Envelope("0190a4b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b", 1, NodeId.of("a"), NodeId.of("b"), "message",
                Optional.of(text), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Map.of(), Instant.EPOCH, new Trace(1, Route.SELF, "v1", Optional.empty(),
                new TraceContext("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", Optional.empty())));
        return new String(Json.envelope(e), StandardCharsets.UTF_8);
    }
}
