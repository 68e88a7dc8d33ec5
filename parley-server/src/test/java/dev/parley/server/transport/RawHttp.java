package dev.parley.server.transport;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 on a bare {@link Socket}, byte for byte as the test writes it: what a proxy or an
 * attacker sends, which no HTTP client library would. Reads answers framed by
 * Content-Length (every answer the tests read here is).
 */
final class RawHttp implements AutoCloseable {
    /** A safety net against a hung hub, never a wait the test relies on. */
    private static final int READ_TIMEOUT_MS = 30_000;

    /** One answer: status, headers (lower-case names) and body. */
    record Answer(int status, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RawHttp(Socket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    static RawHttp connect(int port) {
        return connectFrom("127.0.0.1", port);
    }

    /**
     * Connects from {@code localAddress}: another loopback address (127.0.0.2) is a client
     * address of its own, apart from the test's HTTP client on 127.0.0.1.
     */
    static RawHttp connectFrom(String localAddress, int port) {
        try {
            Socket socket = new Socket();
            socket.bind(new InetSocketAddress(localAddress, 0));
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(READ_TIMEOUT_MS);
            return new RawHttp(socket);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A request head with {@code Host} and the given header lines, and the body. */
    static byte[] request(String method, String path, byte[] body, String... headerLines) {
        StringBuilder head = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: hub\r\n");
        for (String line : headerLines) {
            head.append(line).append("\r\n");
        }
        if (body.length > 0) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("\r\n");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes(head.toString().getBytes(StandardCharsets.ISO_8859_1));
        bytes.writeBytes(body);
        return bytes.toByteArray();
    }

    /**
     * Writes {@code bytes}; false when the hub has already closed the connection (a hub may
     * stop reading, answer and close before a large body is written in full).
     */
    boolean write(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
            return true;
        } catch (SocketException closedByHub) {
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Ends the request stream: a hub that keeps reading sees EOF after what was written. */
    void endOutput() {
        try {
            socket.shutdownOutput();
        } catch (IOException alreadyClosed) {
            // the hub closed first: nothing more can be written anyway
        }
    }

    /** The next answer on the connection. */
    Answer readAnswer() {
        try {
            String statusLine = line();
            if (statusLine == null) {
                throw new AssertionError("the connection closed before an answer");
            }
            int status = Integer.parseInt(statusLine.split(" ")[1]);
            Map<String, String> headers = new LinkedHashMap<>();
            for (String line = line(); line != null && !line.isEmpty(); line = line()) {
                int colon = line.indexOf(':');
                headers.put(line.substring(0, colon).strip().toLowerCase(Locale.ROOT), line.substring(colon + 1).strip());
            }
            int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
            byte[] body = in.readNBytes(length);
            return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Everything the hub still sends until it closes the connection (a reset counts as a
     * close); fails if the hub keeps the connection open past the safety net.
     */
    String readToClose() {
        ByteArrayOutputStream rest = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        try {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                rest.write(buffer, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the hub kept the connection open; it sent: "
                    + rest.toString(StandardCharsets.ISO_8859_1));
        } catch (SocketException reset) {
            // closed with unread input: a reset, still a close
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return rest.toString(StandardCharsets.ISO_8859_1);
    }

    /** Whether the hub has closed the connection: a read ends at once instead of blocking. */
    boolean closedByHub(int withinMillis) {
        try {
            socket.setSoTimeout(withinMillis);
            return in.read() < 0;
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (SocketException reset) {
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            try {
                socket.setSoTimeout(READ_TIMEOUT_MS);
            } catch (SocketException closed) {
                // nothing to restore on a closed socket
            }
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b >= 0; b = in.read()) {
            if (b == '\n') {
                String text = line.toString(StandardCharsets.ISO_8859_1);
                return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
            }
            line.write(b);
        }
        return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
