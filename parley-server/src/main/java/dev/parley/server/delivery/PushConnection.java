package dev.parley.server.delivery;

import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * One HTTP/1.1 connection to a webhook endpoint, kept alive between pushes: a POST written
 * from bytes and an answer read for its status, its body drained when short so that the
 * connection can carry the next push. It is what the JDK's client did for a push without that
 * client's asynchronous stages, which cost more CPU than the request. https goes over the
 * JDK's default TLS context with the host name checked, as the JDK's client did. No redirect
 * is followed: a 3xx is an answer like any other.
 *
 * <p>Not thread-safe: one push at a time; {@link #abort} may come from another thread.
 */
final class PushConnection {
    /**
     * Where connections go: pushes to the same scheme, host and port share them. Looked up on
     * every push, so its hash is worked out once (a record's generated one showed in profiles).
     */
    static final class Endpoint {
        final boolean tls;
        final String host;
        final int port;
        private final int hash;

        private Endpoint(boolean tls, String host, int port) {
            this.tls = tls;
            this.host = host;
            this.port = port;
            this.hash = (host.hashCode() * 31 + port) * 2 + (tls ? 1 : 0);
        }

        static Endpoint of(URI url) {
            boolean tls = url.getScheme().equalsIgnoreCase("https");
            return new Endpoint(tls, url.getHost(), url.getPort() >= 0 ? url.getPort() : tls ? 443 : 80);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Endpoint e && e.hash == hash && e.port == port && e.tls == tls && e.host.equals(host);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** Headers the connection writes itself (as the JDK's client refused them from a caller). */
    private static final java.util.Set<String> OWN_HEADERS = java.util.Set.of("host", "content-length", "connection",
            "transfer-encoding", "expect", "upgrade");
    /** How long an answer's head may be: status line and headers together. */
    private static final int MAX_HEAD_BYTES = 64 * 1024;
    /** An answer body up to this size is read and dropped to keep the connection; a longer one closes it. */
    private static final long MAX_DRAINED_BYTES = 64 * 1024;

    private final Socket socket;
    /** The TCP socket under {@link #socket} (the same one for http): what {@link #abort} closes. */
    private final Socket raw;
    private final InputStream in;
    private final OutputStream out;
    private final byte[] buf = new byte[4096];
    private int pos;
    private int lim;
    private final StringBuilder line = new StringBuilder(128);
    private boolean http10;
    private boolean reusable;
    private boolean answerStarted;
    private long idleSinceNanos;

    private PushConnection(Socket socket, Socket raw) throws IOException {
        this.socket = socket;
        this.raw = raw;
        // From here the push's deadline alone bounds a read (it closes the connection): a read
        // timeout fixed now, from what this push had left, would cut a later push short.
        raw.setSoTimeout(0);
        this.in = socket.getInputStream();
        this.out = new BufferedOutputStream(socket.getOutputStream(), 8 * 1024);
    }

    /**
     * Connects (and for https shakes hands), each step bounded by {@code timeoutMillis}. The TCP
     * socket goes to {@code opening} first, so that the push's deadline can close it under a
     * handshake whose every read comes just in time.
     */
    static PushConnection open(Endpoint endpoint, int timeoutMillis, Consumer<Socket> opening) throws IOException {
        Socket plain = new Socket(Proxy.NO_PROXY); // as the JDK client: no SOCKS proxy from system properties
        opening.accept(plain);
        try {
            plain.setTcpNoDelay(true);
            // the push's deadline closes a connection only once it is open: until then (a TLS
            // handshake that stalls) reads are bounded here, and never longer than the push after
            plain.setSoTimeout(Math.max(1, timeoutMillis));
            plain.connect(new InetSocketAddress(endpoint.host, endpoint.port), Math.max(1, timeoutMillis));
            if (!endpoint.tls) {
                return new PushConnection(plain, plain);
            }
            SSLSocket tls = (SSLSocket) ((SSLSocketFactory) SSLSocketFactory.getDefault())
                    .createSocket(plain, endpoint.host, endpoint.port, true);
            SSLParameters params = tls.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            tls.setSSLParameters(params);
            tls.startHandshake();
            return new PushConnection(tls, plain);
        } catch (IOException | RuntimeException e) {
            plain.close();
            throw e;
        }
    }

    /**
     * Writes {@code head} (request line and headers, ending with the blank line) and
     * {@code body}, and reads the answer: returns its status. Afterwards {@link #reusable} says
     * whether the connection may carry another push.
     */
    int post(byte[] head, byte[] body) throws IOException {
        reusable = false;
        answerStarted = false;
        out.write(head);
        out.write(body);
        out.flush();
        int status;
        boolean keepAlive;
        do {
            status = readStatusLine();
            keepAlive = readHeadersAndBody(status);
        } while (status / 100 == 1 && status != 101); // interim answers (100 Continue, 103): the real one follows
        // bytes past the answer (a body after a 204, more than its Content-Length) would be read
        // as the next push's answer: such a connection is not kept
        reusable = keepAlive && status != 101 && !stale();
        return status;
    }

    /**
     * Whether bytes wait that no push asked for: left over from the last answer, or sent while
     * the connection was idle (a proxy's 408 before it closes). Such a connection is not reused.
     */
    boolean stale() throws IOException {
        return pos != lim || in.available() > 0 || raw.getInputStream().available() > 0;
    }

    /** Whether the last push left the connection ready for another. */
    boolean reusable() {
        return reusable;
    }

    /** Whether any of the answer was read: before that, a reused connection's failure may be the peer having closed it. */
    boolean answerStarted() {
        return answerStarted;
    }

    void idleSince(long nanos) {
        idleSinceNanos = nanos;
    }

    long idleSinceNanos() {
        return idleSinceNanos;
    }

    /**
     * Closes the connection, from any thread: a push blocked on it fails at once. The TCP socket
     * is closed, not the TLS one: closing TLS sends close_notify under the lock a blocked write
     * holds, and would wait as long as that write.
     */
    void abort() {
        try {
            raw.close();
        } catch (IOException e) {
            // closing is all that is wanted; a failure to close leaves nothing to do
        }
    }

    private int readStatusLine() throws IOException {
        String status = readLine();
        // "HTTP/1.1 204 No Content"
        if (status.length() < 12 || !status.startsWith("HTTP/1.") || status.charAt(8) != ' ') {
            throw new IOException("not an HTTP/1.1 answer: " + abbreviated(status));
        }
        http10 = status.charAt(7) == '0';
        try {
            return Integer.parseInt(status, 9, 12, 10);
        } catch (NumberFormatException e) {
            throw new IOException("not an HTTP/1.1 answer: " + abbreviated(status));
        }
    }

    /** Reads the headers and drains the body; returns whether the connection may be kept. */
    private boolean readHeadersAndBody(int status) throws IOException {
        long length = -1;
        boolean chunked = false;
        boolean keepAlive = !http10;
        int headBytes = 0;
        for (String header = readLine(); !header.isEmpty(); header = readLine()) {
            headBytes += header.length() + 2;
            if (headBytes > MAX_HEAD_BYTES) {
                throw new IOException("answer head longer than " + MAX_HEAD_BYTES + " bytes");
            }
            int colon = header.indexOf(':');
            if (colon <= 0) {
                continue;
            }
            String name = header.substring(0, colon).trim();
            String value = header.substring(colon + 1).trim();
            if (name.equalsIgnoreCase("Content-Length")) {
                try {
                    length = Long.parseLong(value);
                } catch (NumberFormatException e) {
                    throw new IOException("bad Content-Length in the answer: " + abbreviated(value));
                }
            } else if (name.equalsIgnoreCase("Transfer-Encoding")) {
                chunked = value.toLowerCase(java.util.Locale.ROOT).contains("chunked");
            } else if (name.equalsIgnoreCase("Connection")) {
                String v = value.toLowerCase(java.util.Locale.ROOT);
                keepAlive = v.contains("close") ? false : v.contains("keep-alive") || keepAlive;
            }
        }
        if (status / 100 == 1 || status == 204 || status == 304) {
            return keepAlive;
        }
        if (chunked) {
            return drainChunks() && keepAlive;
        }
        if (length < 0 || length > MAX_DRAINED_BYTES) {
            return false; // read to its end only by closing, or too long to be worth reading
        }
        skip(length);
        return keepAlive;
    }

    /** Reads and drops a chunked body; false (stop reading) once it is longer than worth keeping the connection for. */
    private boolean drainChunks() throws IOException {
        long total = 0;
        while (true) {
            String size = readLine();
            int end = size.indexOf(';');
            long n;
            try {
                n = Long.parseLong((end < 0 ? size : size.substring(0, end)).trim(), 16);
            } catch (NumberFormatException e) {
                throw new IOException("bad chunk size in the answer: " + abbreviated(size));
            }
            if (n == 0) {
                while (!readLine().isEmpty()) {
                    // trailers: dropped like the body
                }
                return true;
            }
            total += n;
            if (n < 0 || total > MAX_DRAINED_BYTES) {
                return false;
            }
            skip(n);
            if (!readLine().isEmpty()) {
                throw new IOException("a chunk of the answer does not end where its size says");
            }
        }
    }

    private void skip(long n) throws IOException {
        while (n > 0) {
            if (pos == lim) {
                fill();
            }
            int take = (int) Math.min(n, lim - pos);
            pos += take;
            n -= take;
        }
    }

    private String readLine() throws IOException {
        line.setLength(0);
        while (true) {
            if (pos == lim) {
                fill();
            }
            char c = (char) (buf[pos++] & 0xff);
            if (c == '\n') {
                int n = line.length();
                if (n > 0 && line.charAt(n - 1) == '\r') {
                    line.setLength(n - 1);
                }
                return line.toString();
            }
            if (line.length() >= MAX_HEAD_BYTES) {
                throw new IOException("answer head longer than " + MAX_HEAD_BYTES + " bytes");
            }
            line.append(c);
        }
    }

    private void fill() throws IOException {
        int n = in.read(buf, 0, buf.length);
        if (n < 0) {
            throw new EOFException(answerStarted ? "the endpoint closed the connection mid-answer"
                    : "the endpoint closed the connection without answering");
        }
        answerStarted = true;
        pos = 0;
        lim = n;
    }

    private static String abbreviated(String s) {
        return s.length() <= 60 ? s : s.substring(0, 60) + "…";
    }

    /** The request line and headers of a POST to {@code url}, ending with the blank line. */
    static byte[] head(URI url, String contentType, int contentLength, Iterable<String[]> headers) {
        StringBuilder sb = new StringBuilder(320);
        String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        sb.append("POST ").append(path);
        if (url.getRawQuery() != null) {
            sb.append('?').append(url.getRawQuery());
        }
        sb.append(" HTTP/1.1\r\nHost: ").append(url.getHost());
        if (url.getPort() >= 0) {
            sb.append(':').append(url.getPort());
        }
        sb.append("\r\nContent-Length: ").append(contentLength);
        header(sb, "Content-Type", contentType);
        for (String[] h : headers) {
            header(sb, h[0], h[1]);
        }
        return sb.append("\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Appends one header line; a name that is not a token, or a value that would break the head, is refused. */
    private static void header(StringBuilder sb, String name, String value) {
        boolean token = !name.isEmpty();
        for (int i = 0; token && i < name.length(); i++) {
            token = tokenChar(name.charAt(i));
        }
        if (!token) {
            throw new IllegalArgumentException("invalid header name: " + name);
        }
        if (OWN_HEADERS.contains(name.toLowerCase(java.util.Locale.ROOT))) {
            throw new IllegalArgumentException("restricted header name: " + name);
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c != '\t' && (c < 0x20 || c == 0x7f || c > 0xff)) {
                throw new IllegalArgumentException("invalid header value for " + name);
            }
        }
        sb.append("\r\n").append(name).append(": ").append(value);
    }

    private static boolean tokenChar(int c) {
        return c > 0x20 && c < 0x7f && "\"(),/:;<=>?@[\\]{}".indexOf(c) < 0;
    }
}
