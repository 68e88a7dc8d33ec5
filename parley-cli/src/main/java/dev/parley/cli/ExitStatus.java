package dev.parley.cli;

import picocli.CommandLine;

/**
 * The exit statuses scripts can rely on. They are part of the command's contract: the root
 * command's help footer is built from these constants, so the two cannot drift apart.
 */
final class ExitStatus {
    static final int OK = 0;
    /** The hub answered the request with an error not listed below (400, 413, 429, ...). */
    static final int REFUSED = 1;
    static final int USAGE = CommandLine.ExitCode.USAGE;
    static final int UNREACHABLE = 3;
    static final int UNAUTHORIZED = 4;
    static final int FORBIDDEN = 5;
    static final int NOT_FOUND = 6;
    static final int CONFLICT = 7;
    static final int HUB_FAILURE = 8;
    /** {@code parley ask}: no reply came within {@code --timeout} (the hub's 504 {@code reply_timeout}). */
    static final int NO_REPLY = 9;
    static final int INTERRUPTED = 130;

    private ExitStatus() {
    }

    /** The status for a hub error answer: its code where one has its own status, else its HTTP status. */
    static int forError(int status, String code) {
        return "reply_timeout".equals(code) ? NO_REPLY : forHttpStatus(status);
    }

    static int forHttpStatus(int status) {
        return switch (status) {
            case 401 -> UNAUTHORIZED;
            case 403 -> FORBIDDEN;
            case 404 -> NOT_FOUND;
            case 409 -> CONFLICT;
            default -> status >= 500 ? HUB_FAILURE : REFUSED;
        };
    }
}
