package dev.parley.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class WebhookSignatureTest {
    /** RFC 4231, test case 2: key "Jefe", data "what do ya want for nothing?". */
    private static final String RFC_4231_CASE_2 = "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";

    @Test
    void aSignerSignsEachBodyAsTheOneShotSignatureDoes() {
        byte[] rfc = "what do ya want for nothing?".getBytes(StandardCharsets.US_ASCII);
        assertEquals(RFC_4231_CASE_2, WebhookSignature.sign("Jefe", rfc));
        WebhookSignature.Signer signer = WebhookSignature.signer("Jefe");
        assertEquals(RFC_4231_CASE_2, signer.sign(rfc));
        // the keyed copy is never used up: later bodies are signed from the same key, not on top of earlier ones
        for (String body : new String[] {"", "{\"seq\":1}", "{\"seq\":2}", "what do ya want for nothing?"}) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            assertEquals(WebhookSignature.sign("Jefe", bytes), signer.sign(bytes), body);
            assertTrue(WebhookSignature.verify("Jefe", bytes, signer.sign(bytes)));
            assertFalse(WebhookSignature.verify("Jeff", bytes, signer.sign(bytes)));
        }
    }
}
