package dev.parley.cli.bench;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;

/**
 * A Server-Sent Events reader over a raw socket (HTTP/1.1, chunked or close-delimited body).
 * {@link #open()} sends the request and checks the status; {@link #run()} then reads frames
 * until the stream ends or {@link #close()} is called, handing each one to the listener.
 */
public final class SseStream implements Closeable, Runnable {

    /** Receives what the stream carries. Called on the reading thread. */
    public interface Listener {
        /** A comment line (without the leading colon), e.g. {@code " parley ready"}. */
        default void onComment(String text) {
        }

        /**
         * A dispatched event. {@code id} is the parsed {@code id:} field or -1 when absent or
         * not an integer; the data bytes are only valid during the call.
         */
        void onEvent(long id, String event, byte[] data, int dataLength);
    }

    private final String host;
    private final int port;
    private final String target;
    private final String bearer;
    private final Listener listener;
    private final String extraHeaders;

    private Socket socket;
    private InputStream in;
    private volatile boolean closed;

    private final byte[] buf = new byte[64 * 1024];
    private int pos;
    private int lim;
    private byte[] line = new byte[4096];
    private int lineLen;

    // the event being assembled
    private long id = -1;
    private String event;
    private byte[] data = new byte[4096];
    private int dataLen;
    private boolean hasData;

    public SseStream(String host, int port, String target, String bearer, Listener listener) {
        this(host, port, target, bearer, listener, "");
    }

    /**
     * A stream whose request also carries {@code extraHeaders}: complete header lines, each
     * ending with CR LF (e.g. {@code "Last-Event-ID: 42\r\n"}).
     */
    public SseStream(String host, int port, String target, String bearer, Listener listener, String extraHeaders) {
        this.host = host;
        this.port = port;
        this.target = target;
        this.bearer = bearer;
        this.listener = listener;
        this.extraHeaders = extraHeaders;
    }

    /** Connects, sends the request and reads the response head; throws unless 200. */
    public void open() throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(host, port), 5000);
        socket = s;
        in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        String req = "GET " + target + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\n"
                + (bearer == null ? "" : "Authorization: Bearer " + bearer + "\r\n")
                + "Accept: text/event-stream\r\nCache-Control: no-cache\r\n" + extraHeaders + "\r\n";
        out.write(req.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        s.setSoTimeout(10_000);
        readLine();
        String statusLine = new String(line, 0, lineLen, StandardCharsets.ISO_8859_1);
        int status = statusLine.length() >= 12 ? Integer.parseInt(statusLine.substring(9, 12)) : -1;
        chunked = false;
        while (true) {
            readLine();
            if (lineLen == 0) {
                break;
            }
            String h = new String(line, 0, lineLen, StandardCharsets.ISO_8859_1).toLowerCase(Locale.ROOT);
            if (h.startsWith("transfer-encoding:") && h.contains("chunked")) {
                chunked = true;
            }
        }
        if (status != 200) {
            close();
            throw new IOException("stream " + target + " answered " + statusLine);
        }
        s.setSoTimeout(0);
    }

    private boolean chunked;

    @Override
    public void run() {
        try {
            if (chunked) {
                while (true) {
                    readLine();
                    int end = 0;
                    while (end < lineLen && line[end] != ';' && line[end] != ' ') {
                        end++;
                    }
                    int size = Integer.parseInt(new String(line, 0, end, StandardCharsets.ISO_8859_1), 16);
                    if (size == 0) {
                        return;
                    }
                    int left = size;
                    while (left > 0) {
                        if (pos == lim) {
                            fill();
                        }
                        int take = Math.min(left, lim - pos);
                        feed(buf, pos, take);
                        pos += take;
                        left -= take;
                    }
                    readLine(); // CRLF after the chunk data
                }
            } else {
                while (true) {
                    if (pos == lim) {
                        fill();
                    }
                    feed(buf, pos, lim - pos);
                    pos = lim;
                }
            }
        } catch (IOException e) {
            // the stream ended (or was closed by us)
        } finally {
            close();
        }
    }

    public boolean isClosed() {
        return closed;
    }

    // ---- SSE line parsing over the decoded body ----

    private byte[] sseLine = new byte[4096];
    private int sseLen;
    private boolean lastWasCr;

    private void feed(byte[] b, int off, int len) {
        int end = off + len;
        for (int i = off; i < end; i++) {
            byte c = b[i];
            if (c == '\n') {
                if (lastWasCr) { // CR LF: the CR already ended the line
                    lastWasCr = false;
                    continue;
                }
                processLine();
            } else if (c == '\r') {
                lastWasCr = true;
                processLine();
                continue;
            } else {
                if (sseLen == sseLine.length) {
                    sseLine = Arrays.copyOf(sseLine, sseLine.length * 2);
                }
                sseLine[sseLen++] = c;
            }
            lastWasCr = false;
        }
    }

    private void processLine() {
        int n = sseLen;
        sseLen = 0;
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
        byte[] l = sseLine;
        if (l[0] == ':') {
            listener.onComment(new String(l, 1, n - 1, StandardCharsets.UTF_8));
            return;
        }
        int colon = 0;
        while (colon < n && l[colon] != ':') {
            colon++;
        }
        int v = colon + 1;
        if (v < n && l[v] == ' ') {
            v++;
        }
        if (v > n) {
            v = n;
        }
        if (colon == 4 && l[0] == 'd' && l[1] == 'a' && l[2] == 't' && l[3] == 'a') {
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
            hasData = true;
        } else if (colon == 2 && l[0] == 'i' && l[1] == 'd') {
            long x = 0;
            boolean ok = v < n;
            for (int i = v; i < n; i++) {
                if (l[i] < '0' || l[i] > '9') {
                    ok = false;
                    break;
                }
                x = x * 10 + (l[i] - '0');
            }
            id = ok ? x : -1;
        } else if (colon == 5 && l[0] == 'e' && l[1] == 'v' && l[2] == 'e' && l[3] == 'n' && l[4] == 't') {
            event = new String(l, v, n - v, StandardCharsets.UTF_8);
        }
        // "retry:" and unknown fields are ignored
    }

    // ---- raw socket reading (response head and chunk framing) ----

    private void readLine() throws IOException {
        lineLen = 0;
        while (true) {
            if (pos == lim) {
                fill();
            }
            byte b = buf[pos++];
            if (b == '\n') {
                if (lineLen > 0 && line[lineLen - 1] == '\r') {
                    lineLen--;
                }
                return;
            }
            if (lineLen == line.length) {
                line = Arrays.copyOf(line, line.length * 2);
            }
            line[lineLen++] = b;
        }
    }

    private void fill() throws IOException {
        int n = in.read(buf, 0, buf.length);
        if (n < 0) {
            throw new EOFException("stream closed");
        }
        pos = 0;
        lim = n;
    }

    @Override
    public void close() {
        closed = true;
        Socket s = socket;
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
