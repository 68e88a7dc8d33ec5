package dev.parley.core;

import java.util.Map;
import java.util.Optional;

/**
 * What a sender puts in an envelope. At least one of {@code text} and {@code data} is present.
 * {@code messageId} is the sender's idempotency key.
 */
public record Payload(Optional<String> text, Optional<JsonText> data, Optional<String> corrId,
                      Optional<String> threadId, Optional<String> messageId, Map<String, String> meta) {
    public Payload {
        meta = Map.copyOf(meta);
        if (text.isEmpty() && data.isEmpty()) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "at least one of text and data is required");
        }
    }
}
