package dev.parley.nats.auth;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GatewayIdTest {
    @Test
    void aGatewayIdIsOneSubjectToken() {
        assertEquals("build-box_2", new GatewayId("build-box_2").value());
        for (String bad : new String[] {"a.b", "", "*", ">", "A", "-a", "a b"}) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> new GatewayId(bad));
            assertTrue(refused.getMessage().contains("no dots"), refused.getMessage());
        }
    }
}
