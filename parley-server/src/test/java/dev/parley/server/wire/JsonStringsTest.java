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

    private static String json(String text) {
        Envelope e = new Envelope("0190a4b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b", 1, NodeId.of("a"), NodeId.of("b"), "message",
                Optional.of(text), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Map.of(), Instant.EPOCH, new Trace(1, Route.SELF, "v1", Optional.empty(),
                new TraceContext("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", Optional.empty())));
        return new String(Json.envelope(e), StandardCharsets.UTF_8);
    }
}
