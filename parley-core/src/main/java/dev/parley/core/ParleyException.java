package dev.parley.core;

import java.util.Map;

/**
 * A refusal with a stable {@link ErrorCode} and a sentence for humans. Optional detail
 * fields (for example {@code reason} of an ACL denial) travel beside the code.
 */
public final class ParleyException extends RuntimeException {
    private final ErrorCode code;
    private final Map<String, String> details;

    public ParleyException(ErrorCode code, String message) {
        this(code, message, Map.of());
    }

    public ParleyException(ErrorCode code, String message, Map<String, String> details) {
        super(message, null, false, false);
        this.code = code;
        this.details = Map.copyOf(details);
    }

    public ErrorCode code() {
        return code;
    }

    public Map<String, String> details() {
        return details;
    }
}
