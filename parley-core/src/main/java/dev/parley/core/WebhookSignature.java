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
        return header(keyed(secret).doFinal(body));
    }

    /**
     * Signs many bodies with one secret: the key is set up once and each signature works on a
     * copy of it, which costs far less than a new {@link Mac} and key per body (a webhook's pushes).
     */
    public static final class Signer {
        private final Mac keyed;

        private Signer(String secret) {
            this.keyed = keyed(secret);
        }

        public String sign(byte[] body) {
            try {
                return header(((Mac) keyed.clone()).doFinal(body));
            } catch (CloneNotSupportedException e) {
                throw new IllegalStateException("the platform's HmacSHA256 cannot be copied", e);
            }
        }
    }

    public static Signer signer(String secret) {
        return new Signer(secret);
    }

    private static Mac keyed(String secret) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is required by every Java platform", e);
        }
    }

    private static String header(byte[] hmac) {
        return "sha256=" + HexFormat.of().formatHex(hmac);
    }

    /** Constant-time check of a received signature, for receivers. */
    public static boolean verify(String secret, byte[] body, String header) {
        return header != null && MessageDigest.isEqual(sign(secret, body).getBytes(StandardCharsets.US_ASCII),
                header.getBytes(StandardCharsets.US_ASCII));
    }
}
