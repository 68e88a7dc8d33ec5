package dev.parley.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.server.wire.Json;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Requests the HTTP layer refuses before any route sees them (a 64 KiB header, a broken
 * request line, an unknown transfer coding, a request while the hub stops), and connections refused as they are accepted,
 * still get the contract's error body, never an empty answer or the server's HTML page. The
 * sentence is fixed: nothing of the offending request is echoed back.
 */
public final class TransportErrors extends ErrorHandler {
    /** A request the parser refused, before it became a request. */
    @Override
    public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
        fields.put(HttpHeader.CONTENT_TYPE, "application/json");
        return ByteBuffer.wrap(body(status));
    }

    /** A request refused after parsing (one the routes never saw). */
    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        Object status = request.getAttribute(ERROR_STATUS);
        int code = status instanceof Integer given ? given : response.getStatus();
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.write(true, ByteBuffer.wrap(body(code)), callback);
        return true;
    }

    private static byte[] body(int status) {
        return switch (status) {
            case 413 -> body(ErrorCode.PAYLOAD_TOO_LARGE, "the request is larger than the hub accepts");
            case 426, 505 -> body(ErrorCode.INVALID_REQUEST, "the hub speaks HTTP/1.1 only");
            case 503 -> body(ErrorCode.UNAVAILABLE, "the hub is shutting down");
            default -> status >= 500
                    ? body(ErrorCode.INTERNAL, "internal error; the hub log has the details")
                    : body(ErrorCode.INVALID_REQUEST, "the request is malformed or its headers are too large");
        };
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

    private static byte[] body(ErrorCode code, String sentence) {
        ObjectNode body = Json.object();
        body.put("error", code.wire());
        body.put("message", sentence);
        return Json.bytes(body);
    }
}
