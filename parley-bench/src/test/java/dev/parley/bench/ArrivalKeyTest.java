package dev.parley.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A cross-gateway 202 and the SSE frame on the owner carry one envelope id: both must give one key. */
class ArrivalKeyTest {
    private static long key(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return ArrivalKey.uuidKey(b, b.length);
    }

    @Test
    void theAnswerAndTheFrameOfOneEnvelopeShareAKey() {
        String id = "0193f0c4-7a1b-7c2d-8e3f-0123456789ab";
        long fromAck = key("{\"id\":\"" + id + "\",\"seq\":null,\"to\":\"bench-in-0001\",\"status\":\"accepted\",\"gateway\":\"b\"}");
        long fromFrame = key("{\"id\":\"" + id + "\",\"seq\":7,\"from\":\"bench-tx-0000\",\"meta\":{\"id\":\"other\"}}");
        assertEquals(fromAck, fromFrame);
        assertTrue(fromAck >= 0);
        assertNotEquals(fromAck, key("{\"id\":\"0193f0c4-7a1b-7c2d-8e3f-0123456789ac\"}"));
    }

    @Test
    void noUuidIdGivesNoKey() {
        assertEquals(-1, key("{\"seq\":3}"));
        assertEquals(-1, key("{\"id\":\"not-a-uuid\"}"));
        assertEquals(-1, key("{\"id\":\"0193f0c4-7a1b-7c2d-8e3f-0123456789abcd\"}"));
    }
}
