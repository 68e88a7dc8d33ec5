package dev.parley.bench.http;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A lean HTTP/1.1 keep-alive client over one socket, for load generation and tests: the one
 * HTTP client of the benchmarks, for requests and (through {@link #openStream}) for SSE streams.
 *
 * <p>It writes a request (pre-built head and body bytes, so a hot loop allocates nothing for
 * the request) and parses the status line, the headers it needs ({@code Content-Length},
 * {@code Transfer-Encoding: chunked}, {@code Connection: close}) and the body into a
 * reusable buffer. It never retries: a request that fails with an {@link IOException} has an
 * unknown outcome, and the connection is closed (the next call reconnects). A connection made
 * by {@link #selectable} sits on a {@link SocketChannel}, so that a stream opened on it can
 * move to a selector ({@link SseFleet}); the others on a plain socket, which costs the send
 * loop less CPU.
 *
 * <p>Not thread-safe: one connection per thread.
 */
public final class HttpConnection implements Closeable {
    private final String host;
    private final int port;
    private final int readTimeoutMillis;

    private final boolean selectable;
    private Socket socket;
    private InputStream in;
    private OutputStream out;

    private final byte[] buf = new byte[8 * 1024];
    private int pos;
    private int lim;

    private final HeadLine line = new HeadLine(64 * 1024);

    private byte[] body = new byte[4096];
    private int bodyLen;
    private final ChunkedDecoder chunks = new ChunkedDecoder();
    private final ChunkedDecoder.Sink toBody = this::appendBody;
    private int status;
    private boolean chunked;
    private long contentLength;
    private boolean serverWantsClose;

    public HttpConnection(String host, int port, int readTimeoutMillis) {
        this(host, port, readTimeoutMillis, false);
    }

    private HttpConnection(String host, int port, int readTimeoutMillis, boolean selectable) {
        this.host = host;
        this.port = port;
        this.readTimeoutMillis = readTimeoutMillis;
        this.selectable = selectable;
    }

    /** A connection whose streams an {@link SseFleet} can read. */
    public static HttpConnection selectable(String host, int port, int readTimeoutMillis) {
        return new HttpConnection(host, port, readTimeoutMillis, true);
    }

    /** The {@code Host} header value for this connection. */
    public String hostHeader() {
        return host + ":" + port;
    }

    /**
     * Builds a request head ending with the blank line. {@code contentLength} &lt; 0 means no
     * body and no {@code Content-Length} header.
     */
    public static byte[] head(String method, String target, String hostHeader, String bearer, String contentType,
                              int contentLength) {
        return head(method, target, hostHeader, bearer, contentType, contentLength, "");
    }

    /** {@link #head} with {@code extraHeaders}: complete header lines, each ending with CR LF. */
    private static byte[] head(String method, String target, String hostHeader, String bearer, String contentType,
                               int contentLength, String extraHeaders) {
        StringBuilder sb = new StringBuilder(256);
        sb.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
        sb.append("Host: ").append(hostHeader).append("\r\n");
        if (bearer != null) {
            sb.append("Authorization: Bearer ").append(bearer).append("\r\n");
        }
        if (contentType != null) {
            sb.append("Content-Type: ").append(contentType).append("\r\n");
        }
        if (contentLength >= 0) {
            sb.append("Content-Length: ").append(contentLength).append("\r\n");
        }
        sb.append(extraHeaders).append("\r\n");
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** A convenience call for setup code: JSON body (or none), returns status and body text. */
    public Response call(String method, String target, String bearer, String jsonBody) throws IOException {
        byte[] bodyBytes = jsonBody == null ? null : jsonBody.getBytes(StandardCharsets.UTF_8);
        byte[] h = head(method, target, hostHeader(), bearer, bodyBytes == null ? null : "application/json",
                bodyBytes == null ? (method.equals("GET") || method.equals("DELETE") ? -1 : 0) : bodyBytes.length);
        int code = exchange(h, bodyBytes);
        return new Response(code, bodyText());
    }

    /** A status and body text. */
    public record Response(int status, String body) {
    }

    /**
     * Sends one request and reads the whole response. Returns the status code; the body is
     * available through {@link #body()}, {@link #bodyLength()} and {@link #bodyText()} until
     * the next call.
     */
    public int exchange(byte[] requestHead, byte[] requestBody) throws IOException {
        try {
            if (socket == null) {
                connect();
            }
            out.write(requestHead);
            if (requestBody != null && requestBody.length > 0) {
                out.write(requestBody);
            }
            out.flush();
            readResponse();
            if (serverWantsClose) {
                close();
            }
            return status;
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Opens a Server-Sent Events stream: {@code GET target} with {@code extraHeaders} (complete
     * header lines, each ending with CR LF, e.g. {@code "Last-Event-ID: 42\r\n"}), and reads
     * the response head; anything but 200 is an {@link IOException}. The socket then belongs to
     * the returned stream, and this connection starts afresh on its next call. {@code keepData}:
     * whether events carry their data to the listener (false: only id and event name).
     */
    public SseStream openStream(String target, String bearer, String extraHeaders, SseStream.Listener listener,
                                boolean keepData) throws IOException {
        byte[] request = head("GET", target, hostHeader(), bearer, null, -1,
                "Accept: text/event-stream\r\nCache-Control: no-cache\r\n" + extraHeaders);
        try {
            if (socket == null) {
                connect();
            }
            out.write(request);
            out.flush();
            readHead();
            if (status != 200) {
                readBody();
                throw new IOException("stream " + target + " answered " + status + ": " + bodyText());
            }
            socket.setSoTimeout(0); // a stream may idle between heartbeats
            SseStream stream = new SseStream(socket, in, Arrays.copyOfRange(buf, pos, lim), chunked, listener, keepData);
            forget();
            return stream;
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    public byte[] body() {
        return body;
    }

    public int bodyLength() {
        return bodyLen;
    }

    public String bodyText() {
        return new String(body, 0, bodyLen, StandardCharsets.UTF_8);
    }

    /**
     * The first integer value of {@code "name":} in the body, or -1: a cheap way to read
     * {@code seq} from a 202 without a JSON parser.
     */
    public long bodyLongField(byte[] quotedNameColon) {
        long[] first = new long[1];
        return bodyLongFields(quotedNameColon, first) == 0 ? -1 : first[0];
    }

    /**
     * The integer values of every {@code "name":} in the body, in order, into {@code values}
     * (-1 for one that is not an integer); returns how many there were, at most
     * {@code values.length}: the seqs of a batch's answer.
     */
    public int bodyLongFields(byte[] quotedNameColon, long[] values) {
        int n = quotedNameColon.length;
        int found = 0;
        outer:
        for (int i = 0; i + n <= bodyLen && found < values.length; i++) {
            for (int j = 0; j < n; j++) {
                if (body[i + j] != quotedNameColon[j]) {
                    continue outer;
                }
            }
            int k = i + n;
            while (k < bodyLen && body[k] == ' ') {
                k++;
            }
            long v = 0;
            int digits = 0;
            while (k < bodyLen && body[k] >= '0' && body[k] <= '9') {
                v = v * 10 + (body[k] - '0');
                k++;
                digits++;
            }
            values[found++] = digits == 0 ? -1 : v;
            i = k - 1;
        }
        return found;
    }

    private void connect() throws IOException {
        // a channel's socket streams honour the read timeout too (the channel's own reads would not)
        Socket s = selectable ? SocketChannel.open().socket() : new Socket();
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout(readTimeoutMillis);
            s.connect(new InetSocketAddress(host, port), Math.max(1000, readTimeoutMillis));
            in = s.getInputStream();
            out = new BufferedOutputStream(s.getOutputStream(), 8 * 1024);
        } catch (IOException e) {
            s.close();
            throw e;
        }
        socket = s;
        pos = 0;
        lim = 0;
    }

    private void readResponse() throws IOException {
        do {
            readHead();
        } while (status / 100 == 1); // interim responses; read the real one
        readBody();
    }

    /** The status line and the headers this client needs. */
    private void readHead() throws IOException {
        serverWantsClose = false;
        readLine();
        // "HTTP/1.1 202 Accepted"
        if (line.length() < 12 || line.at(0) != 'H' || line.at(8) != ' ') {
            throw new IOException("malformed status line: " + line.text());
        }
        status = (line.at(9) - '0') * 100 + (line.at(10) - '0') * 10 + (line.at(11) - '0');
        if (line.at(7) == '0') { // HTTP/1.0 closes unless told otherwise
            serverWantsClose = true;
        }
        contentLength = -1;
        chunked = false;
        while (true) {
            readLine();
            if (line.length() == 0) {
                return;
            }
            if (line.headerIs("content-length")) {
                contentLength = Long.parseLong(line.headerValue());
            } else if (line.headerIs("transfer-encoding")) {
                chunked = line.headerValue().toLowerCase(java.util.Locale.ROOT).contains("chunked");
            } else if (line.headerIs("connection")) {
                String v = line.headerValue().toLowerCase(java.util.Locale.ROOT);
                if (v.contains("close")) {
                    serverWantsClose = true;
                } else if (v.contains("keep-alive")) {
                    serverWantsClose = false;
                }
            }
        }
    }

    private void readBody() throws IOException {
        bodyLen = 0;
        if (status == 204 || status == 304) {
            return;
        }
        if (chunked) {
            readChunkedBody();
        } else if (contentLength >= 0) {
            readFixedBody((int) contentLength);
        } else {
            readBodyToEof();
            serverWantsClose = true;
        }
    }

    private void readFixedBody(int n) throws IOException {
        ensureBody(n);
        int got = 0;
        while (got < n) {
            if (pos == lim) {
                fill();
            }
            int take = Math.min(n - got, lim - pos);
            System.arraycopy(buf, pos, body, got, take);
            pos += take;
            got += take;
        }
        bodyLen = n;
    }

    private void readChunkedBody() throws IOException {
        chunks.reset();
        while (!chunks.done()) {
            if (pos == lim) {
                fill();
            }
            pos += chunks.feed(buf, pos, lim - pos, toBody);
        }
    }

    private void appendBody(byte[] b, int off, int len) {
        ensureBody(bodyLen + len);
        System.arraycopy(b, off, body, bodyLen, len);
        bodyLen += len;
    }

    private void readBodyToEof() throws IOException {
        bodyLen = 0;
        while (true) {
            if (pos == lim) {
                int n = in.read(buf, 0, buf.length);
                if (n < 0) {
                    return;
                }
                pos = 0;
                lim = n;
            }
            int take = lim - pos;
            ensureBody(bodyLen + take);
            System.arraycopy(buf, pos, body, bodyLen, take);
            bodyLen += take;
            pos = lim;
        }
    }

    private void ensureBody(int n) {
        if (body.length < n) {
            body = Arrays.copyOf(body, Math.max(n, body.length * 2));
        }
    }

    /** Reads one line (without CR LF) into {@link #line}. */
    private void readLine() throws IOException {
        do {
            if (pos == lim) {
                fill();
            }
            pos = line.take(buf, pos, lim);
        } while (!line.complete());
    }

    private void fill() throws IOException {
        int n = in.read(buf, 0, buf.length);
        if (n < 0) {
            throw new EOFException("connection closed by the server");
        }
        pos = 0;
        lim = n;
    }

    @Override
    public void close() {
        Socket s = socket;
        forget();
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /** Drops the socket without closing it (closed, or handed to a stream). */
    private void forget() {
        socket = null;
        in = null;
        out = null;
        pos = 0;
        lim = 0;
    }
}
