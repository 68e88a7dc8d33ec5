package dev.parley.server.metrics;

/** What an HTTP connection waits for; the label names it in {@code parley_connection_timeouts_total}. */
public enum ConnectionPhase {
    /** No request under way: from accept, or the end of the last answer, until a request line. */
    IDLE("idle"),
    /** A request line is in, its headers are not. */
    HEADERS("header"),
    /** The headers are in; the body, if any, is read while the request runs. */
    REQUEST("body");

    private final String label;

    ConnectionPhase(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
