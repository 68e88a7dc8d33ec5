package dev.parley.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.DirectHandlers;

/**
 * Requests the HTTP layer refuses before any route sees them (a 64 KiB header, a broken
 * request line, an oversized entity) still get the contract's error body, never an empty
 * answer. The sentence is fixed: nothing of the offending request is echoed back.
 */
final class TransportErrors {
    private TransportErrors() {
    }

    static DirectHandlers handlers() {
        return DirectHandlers.builder()
                .addHandler(DirectHandler.EventType.BAD_REQUEST, (request, event, status, headers, message) ->
                        answer(status, headers, ErrorCode.INVALID_REQUEST,
                                "the request is malformed or its headers are too large"))
                .addHandler(DirectHandler.EventType.PAYLOAD_TOO_LARGE, (request, event, status, headers, message) ->
                        answer(status, headers, ErrorCode.PAYLOAD_TOO_LARGE, "the request is larger than the hub accepts"))
                .addHandler(DirectHandler.EventType.HTTP_VERSION_NOT_SUPPORTED, (request, event, status, headers,
                        message) -> answer(status, headers, ErrorCode.INVALID_REQUEST, "the hub speaks HTTP/1.1 only"))
                .build();
    }

    private static DirectHandler.TransportResponse answer(io.helidon.http.Status status,
                                                          io.helidon.http.ServerResponseHeaders headers, ErrorCode code,
                                                          String sentence) {
        ObjectNode body = Json.object();
        body.put("error", code.wire());
        body.put("message", sentence);
        return DirectHandler.TransportResponse.builder()
                .status(status)
                .headers(headers)
                .header(HeaderNames.CONTENT_TYPE, "application/json")
                .entity(Json.bytes(body))
                .keepAlive(false)
                .build();
    }
}
