package dev.parley.core;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;

/** The {@code Parley-Signature} header: {@code sha256=<hex HMAC-SHA256 of the body with the secret>}. */
public final class WebhookSignature {
    public static final String HEADER = "Parley-Signature";

    private WebhookSignature() {
    }

    public static String sign(String secret, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return "sha256=" + HexFormat.of().formatHex(mac.doFinal(body));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is required by every Java platform", e);
        }
    }

    /** Constant-time check of a received signature, for receivers. */
    public static boolean verify(String secret, byte[] body, String header) {
        return header != null && MessageDigest.isEqual(sign(secret, body).getBytes(StandardCharsets.US_ASCII),
                header.getBytes(StandardCharsets.US_ASCII));
    }
}
