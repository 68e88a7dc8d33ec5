package dev.parley.server.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A Server-Sent Events client on a raw {@link Socket}: writes an HTTP/1.1 GET by hand,
 * parses the status line and headers, de-chunks the body and splits it into frames
 * ({@code id}, {@code event}, {@code data}, comment lines). Frames are parsed on a
 * background thread into a queue; the test pulls them with timeouts.
 *
 * <p>With {@code startReading = false} nothing is read from the socket until
 * {@link #startReading()} — the slow-reader test uses this to leave the stream unread.
 */
public final class SseClient implements AutoCloseable {

    /** One SSE frame: the fields seen up to the blank line that ended it ({@code retry} as sent, or null). */
    public record Frame(String id, String event, String data, String retry, List<String> comments, long receivedNanos) {
        public boolean isComment() {
            return id == null && event == null && data == null;
        }

        public long seq() {
            assertNotNull(id, "frame without id: " + this);
            return Long.parseLong(id);
        }

        public JsonNode json() {
            assertNotNull(data, "frame without data: " + this);
            try {
                return HubFixture.JSON.readTree(data);
            } catch (IOException e) {
                throw new AssertionError("frame data is not JSON: " + data, e);
            }
        }
    }

    /** The end of the stream: clean EOF (cause null) or a transport error. */
    public record End(Throwable cause) {
    }

    private final Socket socket;
    private final String description;
    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final CountDownLatch headersRead = new CountDownLatch(1);
    private final Map<String, String> headers = new ConcurrentHashMap<>();
    private volatile int status = -1;
    private volatile String errorBody;
    private volatile End end;
    private volatile Thread reader;

    private SseClient(Socket socket, String description) {
        this.socket = socket;
        this.description = description;
    }

    /** Opens a stream and starts parsing at once. */
    public static SseClient open(HubFixture hub, String path, String token, String lastEventId) {
        return open(hub.port(), path, token, lastEventId, 0, true);
    }

    /**
     * Connects to 127.0.0.1:{@code port} and sends the request.
     *
     * @param receiveBuffer when &gt; 0, SO_RCVBUF set before connecting (so the TCP window stays small)
     */
    public static SseClient open(int port, String path, String token, String lastEventId, int receiveBuffer,
                                 boolean startReading) {
        return connect(port, "GET " + path, token, lastEventId == null ? Map.of() : Map.of("Last-Event-ID", lastEventId),
                new byte[0], receiveBuffer, startReading);
    }

    /** POSTs {@code body} as JSON and reads the answer as a stream (the A2A streaming methods); see {@link #open}. */
    public static SseClient post(int port, String path, String token, Map<String, String> headers, byte[] body,
                                 int receiveBuffer, boolean startReading) {
        Map<String, String> all = new java.util.LinkedHashMap<>(headers);
        all.put("Content-Type", "application/json");
        all.put("Content-Length", Integer.toString(body.length));
        return connect(port, "POST " + path, token, all, body, receiveBuffer, startReading);
    }

    private static SseClient connect(int port, String request, String token, Map<String, String> headers, byte[] body,
                                     int receiveBuffer, boolean startReading) {
        try {
            Socket s = new Socket();
            if (receiveBuffer > 0) {
                s.setReceiveBufferSize(receiveBuffer);
            }
            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            StringBuilder req = new StringBuilder();
            req.append(request).append(" HTTP/1.1\r\n");
            req.append("Host: 127.0.0.1:").append(port).append("\r\n");
            req.append("Accept: text/event-stream\r\n");
            if (token != null) {
                req.append("Authorization: Bearer ").append(token).append("\r\n");
            }
            headers.forEach((name, value) -> req.append(name).append(": ").append(value).append("\r\n"));
            req.append("\r\n");
            OutputStream out = s.getOutputStream();
            out.write(req.toString().getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            SseClient c = new SseClient(s, request.substring(request.indexOf(' ') + 1) + (headers.containsKey(
                    "Last-Event-ID") ? " Last-Event-ID=" + headers.get("Last-Event-ID") : ""));
            if (startReading) {
                c.startReading();
            }
            return c;
        } catch (IOException e) {
            throw new AssertionError("could not open stream " + request + ": " + e, e);
        }
    }

    public Socket socket() {
        return socket;
    }

    /** Starts the background parser (idempotent). */
    public synchronized void startReading() {
        if (reader != null) {
            return;
        }
        reader = Thread.ofPlatform().daemon().name("sse-" + description).start(this::readLoop);
    }

    /** Waits for the status line and headers; returns the status. */
    public int awaitStatus(Duration timeout) {
        try {
            assertTrue(headersRead.await(timeout.toMillis(), TimeUnit.MILLISECONDS),
                    "no response head within " + timeout + " on " + description);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return status;
    }

    public String header(String name) {
        return headers.get(name.toLowerCase(Locale.ROOT));
    }

    /** The body of a non-200 answer, once the end was seen. */
    public String errorBody() {
        return errorBody;
    }

    /** The next frame of any kind; fails on timeout or when the stream ended. */
    public Frame next(Duration timeout) {
        Object o;
        try {
            o = queue.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        if (o == null) {
            throw new AssertionError("no frame within " + timeout + " on " + description);
        }
        if (o instanceof End e) {
            queue.add(e); // keep the end visible
            throw new AssertionError("stream ended on " + description
                    + (e.cause() == null ? " (EOF)" : " (" + e.cause() + ")"));
        }
        return (Frame) o;
    }

    /** The next frame that is not a comment (heartbeats are skipped). */
    public Frame nextEvent(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            Frame f = next(Duration.ofNanos(Math.max(left, 1)));
            if (!f.isComment()) {
                return f;
            }
        }
    }

    /** The next {@code n} non-comment frames. */
    public List<Frame> nextEvents(int n, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Frame> out = new ArrayList<>();
        while (out.size() < n) {
            long left = deadline - System.nanoTime();
            try {
                out.add(nextEvent(Duration.ofNanos(Math.max(left, 1))));
            } catch (AssertionError e) {
                throw new AssertionError("got " + out.size() + " of " + n + " events (ids "
                        + out.stream().map(Frame::id).toList() + "); " + e.getMessage(), e);
            }
        }
        return out;
    }

    /** Asserts the first frame is the {@code : parley ready} comment. */
    public void expectReady(Duration timeout) {
        assertEquals(200, awaitStatus(timeout), () -> "stream refused on " + description + ": " + errorBody);
        Frame first = next(timeout);
        assertTrue(first.isComment(), "first frame must be a comment, got " + first);
        assertEquals(List.of("parley ready"), first.comments(), "first frame must be ': parley ready'");
    }

    /**
     * Reads until the stream ends; returns every frame still queued or arriving until then.
     * Fails if the end does not come within {@code timeout}.
     */
    public List<Frame> drainUntilEnd(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Frame> frames = new ArrayList<>();
        while (true) {
            long left = deadline - System.nanoTime();
            Object o;
            try {
                o = queue.poll(Math.max(left, 1), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            if (o == null) {
                throw new AssertionError("stream did not end within " + timeout + " on " + description
                        + " (" + frames.size() + " frames read meanwhile)");
            }
            if (o instanceof End e) {
                queue.add(e);
                return frames;
            }
            frames.add((Frame) o);
        }
    }

    /** The end, if it has been seen. */
    public End end() {
        return end;
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    // ------------------------------------------------------------------ parsing

    private void readLoop() {
        try {
            InputStream in = new BufferedInputStream(socket.getInputStream(), 8192);
            String statusLine = readAsciiLine(in);
            if (statusLine == null) {
                throw new EOFException("no status line");
            }
            String[] parts = statusLine.split(" ", 3);
            int code = Integer.parseInt(parts[1]);
            String line;
            while ((line = readAsciiLine(in)) != null && !line.isEmpty()) {
                int colon = line.indexOf(':');
                if (colon > 0) {
                    headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                            line.substring(colon + 1).trim());
                }
            }
            status = code;
            InputStream body = bodyStream(in);
            if (code != 200) {
                errorBody = new String(body.readAllBytes(), StandardCharsets.UTF_8);
                headersRead.countDown();
                finish(null);
                return;
            }
            headersRead.countDown();
            parseFrames(body);
            finish(null);
        } catch (IOException | RuntimeException e) {
            headersRead.countDown();
            finish(e);
        }
    }

    private InputStream bodyStream(InputStream in) {
        String te = headers.get("transfer-encoding");
        if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
            return new ChunkedInputStream(in);
        }
        String cl = headers.get("content-length");
        if (cl != null) {
            return new BoundedInputStream(in, Long.parseLong(cl));
        }
        return in;
    }

    private void finish(Throwable cause) {
        End e = new End(cause);
        end = e;
        queue.add(e);
    }

    private void parseFrames(InputStream body) throws IOException {
        String id = null;
        String event = null;
        StringBuilder data = null;
        String retry = null;
        List<String> comments = new ArrayList<>();
        String line;
        while ((line = readUtf8Line(body)) != null) {
            if (line.isEmpty()) {
                if (id != null || event != null || data != null || retry != null || !comments.isEmpty()) {
                    queue.add(new Frame(id, event, data == null ? null : data.toString(), retry,
                            List.copyOf(comments), System.nanoTime()));
                }
                id = null;
                event = null;
                data = null;
                retry = null;
                comments.clear();
                continue;
            }
            if (line.startsWith(":")) {
                String c = line.substring(1);
                comments.add(c.startsWith(" ") ? c.substring(1) : c);
                continue;
            }
            int colon = line.indexOf(':');
            String field = colon < 0 ? line : line.substring(0, colon);
            String value = colon < 0 ? "" : line.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
            switch (field) {
                case "id" -> id = value;
                case "event" -> event = value;
                case "retry" -> retry = value;
                case "data" -> {
                    if (data == null) {
                        data = new StringBuilder(value);
                    } else {
                        data.append('\n').append(value);
                    }
                }
                default -> comments.add("[field " + field + "] " + value);
            }
        }
        // EOF: a frame without its blank line is incomplete and is dropped on purpose
    }

    private static String readAsciiLine(InputStream in) throws IOException {
        byte[] b = readLineBytes(in);
        return b == null ? null : new String(b, StandardCharsets.ISO_8859_1);
    }

    private static String readUtf8Line(InputStream in) throws IOException {
        byte[] b = readLineBytes(in);
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    /** A line without its terminator (LF or CRLF); null at EOF before any byte. */
    private static byte[] readLineBytes(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream(128);
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                byte[] b = buf.toByteArray();
                if (b.length > 0 && b[b.length - 1] == '\r') {
                    return java.util.Arrays.copyOf(b, b.length - 1);
                }
                return b;
            }
            buf.write(c);
        }
        return null; // a partial trailing line at EOF is not a line
    }

    /** Decodes {@code Transfer-Encoding: chunked}. */
    private static final class ChunkedInputStream extends InputStream {
        private final InputStream in;
        private long left;
        private boolean done;

        ChunkedInputStream(InputStream in) {
            this.in = in;
        }

        private boolean fill() throws IOException {
            if (done) {
                return false;
            }
            if (left == 0) {
                String size = readAsciiLine(in);
                if (size == null) {
                    throw new EOFException("connection closed inside chunked body");
                }
                if (size.isEmpty()) { // CRLF after the previous chunk's data
                    size = readAsciiLine(in);
                    if (size == null) {
                        throw new EOFException("connection closed inside chunked body");
                    }
                }
                int semi = size.indexOf(';');
                left = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
                if (left == 0) {
                    String trailer;
                    while ((trailer = readAsciiLine(in)) != null && !trailer.isEmpty()) {
                        // skip trailers
                    }
                    done = true;
                    return false;
                }
            }
            return true;
        }

        @Override
        public int read() throws IOException {
            if (!fill()) {
                return -1;
            }
            int c = in.read();
            if (c == -1) {
                throw new EOFException("connection closed inside a chunk");
            }
            left--;
            return c;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (!fill()) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, left));
            if (n == -1) {
                throw new EOFException("connection closed inside a chunk");
            }
            left -= n;
            return n;
        }
    }

    private static final class BoundedInputStream extends InputStream {
        private final InputStream in;
        private long left;

        BoundedInputStream(InputStream in, long length) {
            this.in = in;
            this.left = length;
        }

        @Override
        public int read() throws IOException {
            if (left <= 0) {
                return -1;
            }
            int c = in.read();
            if (c != -1) {
                left--;
            }
            return c;
        }
    }
}
