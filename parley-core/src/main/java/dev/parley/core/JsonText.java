package dev.parley.core;

/**
 * A JSON value kept as its compact text. The domain carries payloads without parsing
 * them; adapters validate the text when it enters and embed it as-is when it leaves.
 */
public record JsonText(String json) {
    public JsonText {
        if (json == null || json.isBlank()) {
            throw new IllegalArgumentException("empty JSON text");
        }
    }
}
