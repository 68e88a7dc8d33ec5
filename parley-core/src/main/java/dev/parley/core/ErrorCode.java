package dev.parley.core;

/**
 * The stable error codes of the contract. Each code carries the HTTP status it is
 * answered with, so that every surface reports the same failure the same way.
 */
public enum ErrorCode {
    INVALID_REQUEST(400),
    /** An agent spec that does not read or does not hold: the message says which field and why. */
    INVALID_SPEC(400),
    INVALID_NODE_ID(400),
    INVALID_CURSOR(400),
    /** A stream's {@code replay} that names no replay mode. */
    INVALID_REPLAY(400),
    INVALID_TOPIC(400),
    /** A time zone that is not an IANA zone name ({@code timeZone}, or a recipient's {@code timezone} label). */
    INVALID_TIME_ZONE(400),
    // --- policy rules and payload schemas ---
    /** A JSON Schema document that is not a valid 2020-12 schema, or that this hub cannot use. */
    INVALID_SCHEMA(400),
    /** An envelope whose {@code data} breaks the schema of its kind. */
    SCHEMA_VIOLATION(400),
    /** No schema is set for the kind. */
    SCHEMA_NOT_FOUND(404),
    UNAUTHORIZED(401),
    FORBIDDEN(403),
    ACL_DENIED(403),
    IDENTITY_MISMATCH(403),
    DEPTH_LIMIT(403),
    /** The sender already has as many active schedules as the hub allows one sender. */
    SCHEDULE_LIMIT(403),
    NOT_FOUND(404),
    NODE_NOT_FOUND(404),
    MESSAGE_NOT_FOUND(404),
    GRANT_NOT_FOUND(404),
    TASK_NOT_FOUND(404),
    DEAD_LETTER_NOT_FOUND(404),
    CAPABILITY_NOT_FOUND(404),
    GROUP_NOT_FOUND(404),
    CARD_NOT_FOUND(404),
    SCHEDULE_NOT_FOUND(404),
    /** No trace, or none of its turns the caller may see. */
    TRACE_NOT_FOUND(404),
    NOT_SUBSCRIBED(404),
    METHOD_NOT_ALLOWED(405),
    NODE_EXISTS(409),
    INVALID_TRANSITION(409),
    /** A heartbeat for an envelope that is not claimed. */
    NOT_CLAIMED(409),
    /** A claim on an envelope whose earlier claim was taken back, before its backoff is over. */
    CLAIM_BACKOFF(409),
    CAPABILITY_TAKEN(409),
    /** A turn's events that contradict it: another envelope, an event id reused for other content, events after its stop. */
    TURN_CONFLICT(409),
    PAYLOAD_TOO_LARGE(413),
    UNSUPPORTED_MEDIA_TYPE(415),
    // --- admission by invite and rate limits ---
    /** An invite token that names no invite. */
    INVALID_TOKEN(401),
    /** An invite past its expiry. */
    EXPIRED_TOKEN(401),
    /** A node proof that is missing where required, or does not verify. */
    NODE_PROOF_INVALID(401),
    /** A ticket that is malformed, badly signed, of another audience or issuer, or not EdDSA. */
    INVALID_TICKET(401),
    /** A ticket past its expiry. */
    EXPIRED_TICKET(401),
    /** The node id differs from the one the invite is bound to. */
    NODE_MISMATCH(403),
    /** An invite already redeemed. */
    TOKEN_ALREADY_USED(409),
    NO_NATS_AUTHORITY(409),
    /** A nonce already used with this invite (or for this node's proofs). */
    REPLAY_DETECTED(409),
    /** A ticket already redeemed, or one whose invite was already redeemed. */
    TICKET_ALREADY_USED(409),
    RATE_LIMITED(429),
    /** A client address that already holds the most connections the hub allows one address. */
    TOO_MANY_CONNECTIONS(429),
    INTERNAL(500),
    UNAVAILABLE(503),
    /** The hub's disk is full: nothing was written; writes resume by themselves once space is freed. */
    STORAGE_FULL(507),
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
