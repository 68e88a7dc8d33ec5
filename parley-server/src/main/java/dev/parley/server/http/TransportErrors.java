package dev.parley.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.server.wire.Json;
import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.DirectHandlers;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Requests the HTTP layer refuses before any route sees them (a 64 KiB header, a broken
 * request line, an oversized entity), and connections refused as they are accepted, still
 * get the contract's error body, never an empty answer. The sentence is fixed: nothing of the offending request is echoed back.
 */
public final class TransportErrors {
    private TransportErrors() {
    }

    public static DirectHandlers handlers() {
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

    /**
     * The whole answer to a connection refused as it is accepted, before any HTTP is read,
     * so written as bytes: a fixed status line and headers, and the contract's error body.
     */
    static byte[] tooManyConnections(int perAddress) {
        byte[] body = body(ErrorCode.TOO_MANY_CONNECTIONS, "this address already holds " + perAddress
                + " connections to the hub, the most it allows; close one and retry");
        String head = "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length + "\r\nConnection: close\r\n\r\n";
        byte[] answer = Arrays.copyOf(head.getBytes(StandardCharsets.US_ASCII), head.length() + body.length);
        System.arraycopy(body, 0, answer, head.length(), body.length);
        return answer;
    }

    private static DirectHandler.TransportResponse answer(io.helidon.http.Status status,
                                                          io.helidon.http.ServerResponseHeaders headers, ErrorCode code,
                                                          String sentence) {
        return DirectHandler.TransportResponse.builder()
                .status(status)
                .headers(headers)
                .header(HeaderNames.CONTENT_TYPE, "application/json")
                .entity(body(code, sentence))
                .keepAlive(false)
                .build();
    }

    private static byte[] body(ErrorCode code, String sentence) {
        ObjectNode body = Json.object();
        body.put("error", code.wire());
        body.put("message", sentence);
        return Json.bytes(body);
    }
}
