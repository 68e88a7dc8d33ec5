package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.SocketTimeoutException;
import java.util.Locale;

/**
 * A request the hub did not fulfil: either it answered with its {@code {"error","message"}}
 * body, or it could not be reached at all. Carries the exit status the command ends with,
 * so every command maps the same failure to the same status.
 */
final class HubException extends RuntimeException {
    private static final int MAX_QUOTED_BODY = 200;

    private final String code;
    private final int exitStatus;
    private final boolean retryable;
    private final JsonNode body;

    private HubException(String code, String message, int exitStatus, boolean retryable, JsonNode body,
                         Throwable cause) {
        super(message, cause);
        this.code = code;
        this.exitStatus = exitStatus;
        this.retryable = retryable;
        this.body = body;
    }

    /** The hub answered {@code status}; {@code text} is its body, normally the contract's error JSON. */
    static HubException answered(int status, String text) {
        JsonNode body = parse(text);
        String code = body.path("error").asText("http_" + status);
        String message = body.path("message").asText("");
        if (message.isEmpty()) {
            message = text == null || text.isBlank() ? "HTTP " + status : abbreviate(text.strip());
        }
        String reason = body.path("reason").asText("");
        if (!reason.isEmpty() && !message.contains(reason)) {
            message += " (" + reason + ")";
        }
        return new HubException(code, message, ExitStatus.forError(status, code), status >= 500, body, null);
    }

    /** No answer at all: refused, timed out, reset. Worth retrying for a follower. */
    static HubException unreachable(URI hub, IOException cause) {
        String why = switch (cause) {
            case SocketTimeoutException t when t.getMessage() != null -> t.getMessage().toLowerCase(Locale.ROOT); // connect or read
            case ConnectException c -> "connection refused";
            default -> cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName();
        };
        return new HubException("unreachable", "cannot reach the hub at " + hub + ": " + why,
                ExitStatus.UNREACHABLE, true, MissingNode.getInstance(), cause);
    }

    /** The hub answered 2xx with something that is not the contract's JSON. */
    static HubException malformed(String what) {
        return new HubException("bad_answer", what, ExitStatus.HUB_FAILURE, false, MissingNode.getInstance(), null);
    }

    /**
     * A failure on this side of the wire, before or after the requests (a key file that
     * cannot be read or written): reported like the hub's refusals, exit {@link ExitStatus#REFUSED}.
     */
    static HubException local(String code, String message, Throwable cause) {
        return new HubException(code, message, ExitStatus.REFUSED, false, MissingNode.getInstance(), cause);
    }

    /** Caught before any request: every route but /healthz needs a bearer token. */
    static HubException noToken() {
        return new HubException("unauthorized", "no token: set PARLEY_TOKEN or pass --token",
                ExitStatus.UNAUTHORIZED, false, MissingNode.getInstance(), null);
    }

    /** The same failure, its message followed by {@code (detail)}: what only the command knows to add. */
    HubException withDetail(String detail) {
        return new HubException(code, getMessage() + " (" + detail + ")", exitStatus, retryable, body, getCause());
    }

    /** The contract's error code, e.g. {@code acl_denied}, or {@code unreachable}. */
    String code() {
        return code;
    }

    int exitStatus() {
        return exitStatus;
    }

    /** True for failures a later attempt may not see: no answer, or a 5xx. */
    boolean retryable() {
        return retryable;
    }

    /** The hub's full error body (detail fields beyond code and message), or a missing node. */
    JsonNode body() {
        return body;
    }

    private static JsonNode parse(String text) {
        if (text == null || text.isBlank()) {
            return MissingNode.getInstance();
        }
        try {
            return JsonTrees.read(text);
        } catch (IOException notJson) {
            return MissingNode.getInstance();
        }
    }

    private static String abbreviate(String text) {
        return text.length() <= MAX_QUOTED_BODY ? text : text.substring(0, MAX_QUOTED_BODY) + "...";
    }
}
