package dev.parley.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class NodeIdTest {
    private static final Pattern CONTRACT = Pattern.compile("^[a-z0-9][a-z0-9._-]{0,62}$");
    private static final String ALPHABET = "abcxyz0189._-AZ /:@é\u0000";

    @ParameterizedTest
    @ValueSource(strings = {"a", "0", "worker-1", "lead.team_a", "a23456789012345678901234567890123456789012345678901234567890123"})
    void acceptsIdsOfThePattern(String id) {
        assertEquals(id, NodeId.of(id).value());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-a", ".a", "_a", "A", "a b", "a/b", "é", "a234567890123456789012345678901234567890123456789012345678901234"})
    void refusesIdsOutsideThePattern(String id) {
        ParleyException e = assertThrows(ParleyException.class, () -> NodeId.of(id));
        assertEquals(ErrorCode.INVALID_NODE_ID, e.code());
    }

    /** Seeded random strings: NodeId accepts exactly what the contract's pattern accepts. */
    static Stream<String> generated() {
        Random random = new Random(20261122);
        return IntStream.range(0, 500).mapToObj(i -> {
            StringBuilder id = new StringBuilder();
            int length = random.nextInt(70);
            for (int c = 0; c < length; c++) {
                id.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
            }
            return id.toString();
        });
    }

    @ParameterizedTest
    @MethodSource("generated")
    void agreesWithTheContractPattern(String candidate) {
        boolean valid = CONTRACT.matcher(candidate).matches();
        try {
            NodeId.of(candidate);
            assertEquals(true, valid, "accepted " + candidate);
        } catch (ParleyException e) {
            assertEquals(false, valid, "refused " + candidate);
        }
    }
}
