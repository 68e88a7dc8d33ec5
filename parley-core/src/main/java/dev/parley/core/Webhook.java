package dev.parley.core;

import java.net.URI;
import java.net.URISyntaxException;

/** Where and how a node is pushed to: an http(s) URL and the secret that signs each body. */
public record Webhook(URI url, String secret) {
    public Webhook {
        String scheme = url.getScheme();
        if (scheme == null || !(scheme.equals("http") || scheme.equals("https")) || url.getHost() == null) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "webhook.url must be an absolute http or https URL");
        }
        if (secret == null || secret.length() < 16 || secret.length() > 256) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "webhook.secret must be 16 to 256 characters");
        }
    }

    public static Webhook of(String url, String secret) {
        try {
            return new Webhook(new URI(url), secret);
        } catch (URISyntaxException e) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "webhook.url is not a URL: " + e.getReason());
        }
    }
}
