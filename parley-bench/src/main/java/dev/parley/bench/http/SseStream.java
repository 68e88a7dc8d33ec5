package dev.parley.bench.http;

import dev.parley.server.wire.ByteLanes;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One Server-Sent Events stream opened by {@link HttpConnection#openStream}: the body
 * (chunked or close-delimited) parsed into events as its bytes arrive, lines ended by LF, CR
 * or CR LF. It is read either on a thread of its own ({@link #run()}, blocking) or, among many,
 * by the selector threads of an {@link SseFleet}; the listener is called on the reading thread.
 */
public final class SseStream implements Closeable, Runnable {

    /** Receives what the stream carries. Called on the reading thread. */
    public interface Listener {
        /** A comment line (without the leading colon), e.g. {@code " parley ready"}. */
        default void onComment(String text) {
        }

        /**
         * A dispatched event. {@code id} is the parsed {@code id:} field or -1 when absent or
         * not an integer; the data bytes are only valid during the call (and empty unless the
         * stream keeps data).
         */
        void onEvent(long id, String event, byte[] data, int dataLength);

        /** The stream ended: {@code error} says why, or is null when the hub closed it. Not after {@link #close()}. */
        default void onEnd(String error) {
        }
    }

    private static final long LF = ByteLanes.each('\n');
    private static final long CR = ByteLanes.each('\r');

    /** Without data kept, this much of a line is enough: comments, ids and event names are short. */
    private static final int LINE_HEAD = 64;

    final Socket socket;
    private final InputStream in;
    private byte[] pending;
    private final ChunkedDecoder chunks;
    private final ChunkedDecoder.Sink toLines = this::lines;
    private final Listener listener;
    private final boolean keepData;
    private volatile boolean closed;

    // the line being read: its first bytes (all of them when data is kept), and its full length
    private byte[] line = new byte[LINE_HEAD];
    private int lineLen;
    private boolean lastWasCr;

    // the event being assembled
    private long id = -1;
    private String event;
    private byte[] data;
    private int dataLen;
    private boolean hasData;

    SseStream(Socket socket, InputStream in, byte[] pending, boolean chunked, Listener listener,
              boolean keepData) {
        this.socket = socket;
        this.in = in;
        this.pending = pending;
        this.chunks = chunked ? new ChunkedDecoder() : null;
        this.listener = listener;
        this.keepData = keepData;
        this.data = keepData ? new byte[4096] : new byte[0];
    }

    /** Reads on this thread until the stream ends or is closed. */
    @Override
    public void run() {
        byte[] buf = new byte[64 * 1024];
        try {
            feedPending();
            while (true) {
                int n = in.read(buf, 0, buf.length);
                if (n < 0) {
                    throw new EOFException("stream closed");
                }
                feed(buf, 0, n);
            }
        } catch (IOException | RuntimeException e) {
            failed(e);
        }
    }

    /** The body bytes that came with the response head; first thing a reader feeds. */
    void feedPending() throws IOException {
        byte[] p = pending;
        pending = null;
        if (p != null && p.length > 0) {
            feed(p, 0, p.length);
        }
    }

    /** Body bytes as they arrived on the socket. */
    void feed(byte[] b, int off, int len) throws IOException {
        if (chunks == null) {
            lines(b, off, len);
            return;
        }
        int i = off;
        int end = off + len;
        while (i < end) {
            i += chunks.feed(b, i, end - i, toLines);
            if (chunks.done()) {
                throw new EOFException("the stream ended (last chunk)");
            }
        }
    }

    /** Ends the stream on what stopped its reading: the end of the body is no error. */
    void failed(Exception e) {
        end(e instanceof EOFException ? null : e.toString());
    }

    /** Ends the stream: closes it and, unless it was closed on purpose, tells the listener. */
    void end(String error) {
        boolean tell = !closed;
        close();
        if (tell) {
            listener.onEnd(error);
        }
    }

    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
        try {
            socket.close(); // and its channel, when it has one
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    // ---- SSE lines over the decoded body ----

    /**
     * Splits bytes into lines. A run of bytes up to the next line end is found first and
     * copied as one: a replay brings hundreds of megabytes, and copying them byte by byte made
     * this reader, not the hub, the slower side of {@code bench replay}.
     */
    private void lines(byte[] b, int off, int len) {
        int end = off + len;
        int i = off;
        while (i < end) {
            byte c = b[i];
            if (c == '\n' || c == '\r') {
                i++;
                if (c == '\n' && lastWasCr) { // CR LF: the CR already ended the line
                    lastWasCr = false;
                    continue;
                }
                lastWasCr = c == '\r';
                line();
                lineLen = 0;
                continue;
            }
            lastWasCr = false;
            int start = i;
            i = lineEnd(b, i + 1, end);
            append(b, start, i - start);
        }
    }

    /**
     * The index of the first LF or CR from {@code i}, or {@code end}: eight bytes at a time, as
     * a replay's lines are a kilobyte long and this reader shares the cores with the hub it
     * measures (a byte at a time, the warm rounds of {@code bench replay} were 5–8 % slower).
     */
    static int lineEnd(byte[] b, int i, int end) {
        for (; i + Long.BYTES <= end; i += Long.BYTES) {
            long x = ByteLanes.at(b, i);
            long found = ByteLanes.zero(x ^ LF) | ByteLanes.zero(x ^ CR);
            if (found != 0) {
                return ByteLanes.lowest(found, i);
            }
        }
        while (i < end && b[i] != '\n' && b[i] != '\r') {
            i++;
        }
        return i;
    }

    /** Adds {@code n} bytes to the line: all of them when data is kept, else what fits its head. */
    private void append(byte[] b, int from, int n) {
        if (keepData && lineLen + n > line.length) {
            line = Arrays.copyOf(line, Math.max(line.length * 2, lineLen + n));
        }
        int room = line.length - lineLen;
        if (room > 0) {
            System.arraycopy(b, from, line, lineLen, Math.min(n, room));
        }
        lineLen += n;
    }

    private void line() {
        int n = lineLen;
        int seen = Math.min(n, line.length); // less than n only when data is not kept
        byte[] l = line;
        if (n == 0) {
            if (hasData) {
                listener.onEvent(id, event == null ? "message" : event, data, dataLen);
            }
            id = -1;
            event = null;
            dataLen = 0;
            hasData = false;
            return;
        }
        if (l[0] == ':') {
            listener.onComment(new String(l, 1, seen - 1, StandardCharsets.UTF_8));
            return;
        }
        int colon = 0;
        while (colon < seen && l[colon] != ':') {
            colon++;
        }
        int v = Math.min(colon + 1, seen);
        if (v < seen && l[v] == ' ') {
            v++;
        }
        if (colon == 4 && l[0] == 'd' && l[1] == 'a' && l[2] == 't' && l[3] == 'a') {
            if (keepData) {
                int add = n - v;
                int need = dataLen + add + (hasData ? 1 : 0);
                if (need > data.length) {
                    data = Arrays.copyOf(data, Math.max(need, data.length * 2));
                }
                if (hasData) {
                    data[dataLen++] = '\n';
                }
                System.arraycopy(l, v, data, dataLen, add);
                dataLen += add;
            }
            hasData = true;
        } else if (colon == 2 && l[0] == 'i' && l[1] == 'd') {
            long x = 0;
            boolean ok = v < n && n == seen;
            for (int i = v; i < seen && ok; i++) {
                ok = l[i] >= '0' && l[i] <= '9';
                x = x * 10 + (l[i] - '0');
            }
            id = ok ? x : -1;
        } else if (colon == 5 && l[0] == 'e' && l[1] == 'v' && l[2] == 'e' && l[3] == 'n' && l[4] == 't') {
            event = new String(l, v, seen - v, StandardCharsets.UTF_8);
        }
        // "retry:" and unknown fields are ignored
    }
}
