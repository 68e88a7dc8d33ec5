package dev.parley.mcp;

/**
 * The hub did not do what a tool asked: it answered with the contract's error body
 * ({@code code} is its {@code error} field, e.g. {@code acl_denied}), or it could not be
 * reached ({@code unreachable}). The message is the hub's sentence, fit to show a model.
 */
public final class HubRefusal extends RuntimeException {
    private final String code;
    private final int status;

    public HubRefusal(String code, String message, int status) {
        super(message);
        this.code = code;
        this.status = status;
    }

    /** The contract's error code, or {@code unreachable} when there was no answer. */
    public String code() {
        return code;
    }

    /** The HTTP status of the answer; 0 when there was none. */
    public int status() {
        return status;
    }
}
