package dev.parley.core;

/**
 * The stable error codes of the contract. Each code carries the HTTP status it is
 * answered with, so that every surface reports the same failure the same way.
 */
public enum ErrorCode {
    INVALID_REQUEST(400),
    INVALID_NODE_ID(400),
    INVALID_CURSOR(400),
    INVALID_TOPIC(400),
    UNAUTHORIZED(401),
    FORBIDDEN(403),
    ACL_DENIED(403),
    IDENTITY_MISMATCH(403),
    DEPTH_LIMIT(403),
    NOT_FOUND(404),
    NODE_NOT_FOUND(404),
    MESSAGE_NOT_FOUND(404),
    GRANT_NOT_FOUND(404),
    TASK_NOT_FOUND(404),
    DEAD_LETTER_NOT_FOUND(404),
    NOT_SUBSCRIBED(404),
    METHOD_NOT_ALLOWED(405),
    NODE_EXISTS(409),
    INVALID_TRANSITION(409),
    PAYLOAD_TOO_LARGE(413),
    UNSUPPORTED_MEDIA_TYPE(415),
    RATE_LIMITED(429),
    INTERNAL(500),
    UNAVAILABLE(503),
    REPLY_TIMEOUT(504);

    private final int status;

    ErrorCode(int status) {
        this.status = status;
    }

    /** The HTTP status this code is answered with. */
    public int status() {
        return status;
    }

    /** The snake_case wire form, e.g. {@code acl_denied}. */
    public String wire() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
