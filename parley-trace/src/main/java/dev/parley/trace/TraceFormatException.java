package dev.parley.trace;

/** A trace event that breaks the contract; the message says which field and why, in the user's words. */
public final class TraceFormatException extends IllegalArgumentException {
    public TraceFormatException(String message) {
        super(message);
    }
}
