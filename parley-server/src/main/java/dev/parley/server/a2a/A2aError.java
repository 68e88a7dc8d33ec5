package dev.parley.server.a2a;

import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A refusal on the A2A surface, in the error model of the A2A specification (section 3.3.2
 * and the mapping table of section 5.4): each kind carries its JSON-RPC code, its HTTP status
 * and gRPC-style status name for the HTTP+JSON binding, and the {@code ErrorInfo} reason.
 * Refusals of Parley itself that A2A has no error for (authentication, the ACL, rate
 * limits) use {@link Kind#REFUSED}: JSON-RPC {@code -32000}, the implementation-defined
 * server error outside A2A's reserved -32001…-32099, with the Parley code in the details.
 */
final class A2aError extends RuntimeException {
    /** The A2A error types, with their binding codes. */
    enum Kind {
        PARSE_ERROR(-32700, 400, "INVALID_ARGUMENT", "Invalid JSON payload"),
        INVALID_REQUEST(-32600, 400, "INVALID_ARGUMENT", "Request payload validation error"),
        METHOD_NOT_FOUND(-32601, 404, "NOT_FOUND", "Method not found"),
        INVALID_PARAMS(-32602, 400, "INVALID_ARGUMENT", "Invalid parameters"),
        INTERNAL(-32603, 500, "INTERNAL", "Internal error"),
        TASK_NOT_FOUND(-32001, 404, "NOT_FOUND", "Task not found"),
        TASK_NOT_CANCELABLE(-32002, 400, "FAILED_PRECONDITION", "Task cannot be canceled"),
        PUSH_NOTIFICATION_NOT_SUPPORTED(-32003, 400, "FAILED_PRECONDITION", "Push notifications are not supported"),
        UNSUPPORTED_OPERATION(-32004, 400, "FAILED_PRECONDITION", "This operation is not supported"),
        CONTENT_TYPE_NOT_SUPPORTED(-32005, 400, "INVALID_ARGUMENT", "Incompatible content types"),
        INVALID_AGENT_RESPONSE(-32006, 500, "INTERNAL", "Invalid agent response"),
        EXTENDED_AGENT_CARD_NOT_CONFIGURED(-32007, 400, "FAILED_PRECONDITION", "Extended agent card not configured"),
        EXTENSION_SUPPORT_REQUIRED(-32008, 400, "FAILED_PRECONDITION", "Extension support required"),
        VERSION_NOT_SUPPORTED(-32009, 400, "FAILED_PRECONDITION", "Protocol version not supported"),
        REFUSED(-32000, 403, "PERMISSION_DENIED", "Refused by the hub");

        final int code;
        final int httpStatus;
        final String statusName;
        final String title;

        Kind(int code, int httpStatus, String statusName, String title) {
            this.code = code;
            this.httpStatus = httpStatus;
            this.statusName = statusName;
            this.title = title;
        }

        /** The ErrorInfo reason: the error type in UPPER_SNAKE_CASE without "Error". */
        String reason() {
            return name();
        }

        /** True for the A2A-specific errors (section 3.3.2), which carry an ErrorInfo. */
        boolean a2aSpecific() {
            return code >= -32099 && code <= -32001;
        }
    }

    final Kind kind;
    /** HTTP status for this refusal (the kind's, or Parley's for {@link Kind#REFUSED}). */
    final int httpStatus;
    /** Extra context: the Parley error code and its details, task ids. */
    final Map<String, String> metadata;

    A2aError(Kind kind, String message) {
        this(kind, message, kind.httpStatus, Map.of());
    }

    A2aError(Kind kind, String message, int httpStatus, Map<String, String> metadata) {
        super(message, null, false, false);
        this.kind = kind;
        this.httpStatus = httpStatus;
        this.metadata = Map.copyOf(metadata);
    }

    static A2aError invalidParams(String message) {
        return new A2aError(Kind.INVALID_PARAMS, message);
    }

    static A2aError invalidRequest(String message) {
        return new A2aError(Kind.INVALID_REQUEST, message);
    }

    static A2aError taskNotFound(String taskId) {
        return new A2aError(Kind.TASK_NOT_FOUND, "task " + taskId + " does not exist or is not visible to the caller",
                Kind.TASK_NOT_FOUND.httpStatus, Map.of("taskId", taskId));
    }

    /** The gRPC-style status name for an HTTP status of a Parley refusal. */
    private static String statusName(int status) {
        return switch (status) {
            case 401 -> "UNAUTHENTICATED";
            case 404 -> "NOT_FOUND";
            case 409 -> "ABORTED";
            case 413, 429 -> "RESOURCE_EXHAUSTED";
            case 503 -> "UNAVAILABLE";
            default -> status >= 500 ? "INTERNAL" : "PERMISSION_DENIED";
        };
    }

    String statusName() {
        return kind == Kind.REFUSED ? statusName(httpStatus) : kind.statusName;
    }

    /** A Parley refusal as the A2A error a client understands. */
    static A2aError from(ParleyException e) {
        Map<String, String> metadata = new LinkedHashMap<>(e.details());
        metadata.put("parleyError", e.code().wire());
        return switch (e.code()) {
            case TASK_NOT_FOUND -> new A2aError(Kind.TASK_NOT_FOUND, e.getMessage(), 404, metadata);
            case INVALID_TRANSITION -> new A2aError(Kind.TASK_NOT_CANCELABLE, e.getMessage(), 400, metadata);
            case INVALID_REQUEST, INVALID_NODE_ID, INVALID_CURSOR, INVALID_TOPIC ->
                    new A2aError(Kind.INVALID_PARAMS, e.getMessage(), 400, metadata);
            case PAYLOAD_TOO_LARGE -> new A2aError(Kind.INVALID_REQUEST, e.getMessage(), 413, metadata);
            case UNSUPPORTED_MEDIA_TYPE -> new A2aError(Kind.CONTENT_TYPE_NOT_SUPPORTED, e.getMessage(), 415, metadata);
            case INTERNAL, UNAVAILABLE, REPLY_TIMEOUT -> new A2aError(Kind.INTERNAL, e.getMessage(),
                    e.code().status(), metadata);
            default -> new A2aError(Kind.REFUSED, e.getMessage(), e.code().status(), metadata);
        };
    }

    static boolean isAuthentication(ParleyException e) {
        return e.code() == ErrorCode.UNAUTHORIZED;
    }
}
