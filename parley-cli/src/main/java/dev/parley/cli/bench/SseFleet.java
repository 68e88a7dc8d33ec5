package dev.parley.cli.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Many mostly idle SSE streams held cheaply: non-blocking sockets on a few selector
 * threads, one shared read buffer per thread, and per stream only a small parser state (the
 * first bytes of the current line, never the event data). It records per stream when the
 * connect started, when {@code : parley ready} arrived, and the arrival time, id and event
 * name of the first event; and counts events. Frames are assumed to end lines with LF (a CR
 * is ignored), as the hub writes them.
 */
final class SseFleet implements AutoCloseable {
    private static final int HEAD_BYTES = 32;
    /** Arrival times are kept for this many events per stream. */
    static final int TRACKED_EVENTS = 8;
    private static final byte[] READY = ": parley ready".getBytes(StandardCharsets.US_ASCII);

    private final InetSocketAddress address;
    private final String hostHeader;
    private final Loop[] loops;
    private final List<Stream> streams = new ArrayList<>();
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicInteger ready = new AtomicInteger();
    private final AtomicInteger withEvent = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private volatile boolean closed;

    SseFleet(String host, int port, int selectorThreads) throws IOException {
        this.address = new InetSocketAddress(host, port);
        this.hostHeader = host + ":" + port;
        this.loops = new Loop[Math.max(1, selectorThreads)];
        for (int i = 0; i < loops.length; i++) {
            loops[i] = new Loop(Selector.open());
            Thread.ofPlatform().daemon().name("bench-sse-fleet-" + i).start(loops[i]);
        }
    }

    /** Starts connecting a stream of {@code target} with {@code bearer}; returns its index. */
    int open(String target, String bearer) throws IOException {
        String request = "GET " + target + " HTTP/1.1\r\nHost: " + hostHeader + "\r\nAuthorization: Bearer " + bearer
                + "\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n";
        Stream s;
        synchronized (streams) {
            s = new Stream(streams.size(), request.getBytes(StandardCharsets.US_ASCII));
            streams.add(s);
        }
        pending.incrementAndGet();
        SocketChannel ch = SocketChannel.open();
        try {
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            s.channel = ch;
            s.connectStart = System.nanoTime();
            ch.connect(address);
        } catch (IOException e) {
            ch.close();
            s.error = e.toString();
            s.ended = true;
            pending.decrementAndGet();
            failed.incrementAndGet();
            throw e;
        }
        Loop loop = loops[s.index % loops.length];
        loop.incoming.add(s);
        loop.selector.wakeup();
        return s.index;
    }

    /** Streams connecting or waiting for their ready comment. */
    int pending() {
        return pending.get();
    }

    int readyCount() {
        return ready.get();
    }

    /** Streams that have seen at least one event. */
    int withEventCount() {
        return withEvent.get();
    }

    /** Streams that have seen at least {@code n} events. */
    int withEventsCount(int n) {
        int c = 0;
        for (int i = 0; i < size(); i++) {
            if (stream(i).events >= n) {
                c++;
            }
        }
        return c;
    }

    int failedCount() {
        return failed.get();
    }

    int size() {
        synchronized (streams) {
            return streams.size();
        }
    }

    Stream stream(int index) {
        synchronized (streams) {
            return streams.get(index);
        }
    }

    /** One stream's record. Times are System.nanoTime(); 0 means not yet. */
    static final class Stream {
        final int index;
        private final byte[] request;
        SocketChannel channel;
        volatile long connectStart;
        volatile long readyAt;
        volatile long firstEventAt;
        volatile long firstEventId = -1;
        volatile String firstEvent;
        volatile long events;
        /** Arrival times of the first {@link #TRACKED_EVENTS} events (0: not yet). */
        final long[] eventAt = new long[TRACKED_EVENTS];
        volatile int status;
        volatile boolean ended;
        volatile String error;

        // parser state (selector thread only)
        private int written;
        private boolean inBody;
        private boolean chunked;
        private byte[] headLine = new byte[256];
        private int headLen;
        private int chunkState; // 0 size line, 1 data, 2 CRLF after data
        private long chunkLeft;
        private long chunkSize;
        private boolean chunkSizeDone;
        private final byte[] line = new byte[HEAD_BYTES];
        private int lineLen;
        private long id = -1;
        private String event;
        private boolean hasData;

        private Stream(int index, byte[] request) {
            this.index = index;
            this.request = request;
        }
    }

    private final class Loop implements Runnable {
        final Selector selector;
        final Queue<Stream> incoming = new ConcurrentLinkedQueue<>();
        private final ByteBuffer buf = ByteBuffer.allocateDirect(64 * 1024);
        private final byte[] bytes = new byte[64 * 1024];

        Loop(Selector selector) {
            this.selector = selector;
        }

        @Override
        public void run() {
            try {
                while (!closed) {
                    selector.select(200);
                    for (Stream s = incoming.poll(); s != null; s = incoming.poll()) {
                        try {
                            s.channel.register(selector, SelectionKey.OP_CONNECT, s);
                        } catch (IOException e) {
                            end(s, null, e.toString());
                        }
                    }
                    long now = System.nanoTime();
                    var keys = selector.selectedKeys();
                    for (SelectionKey key : keys) {
                        Stream s = (Stream) key.attachment();
                        try {
                            if (!key.isValid()) {
                                continue;
                            }
                            if (key.isConnectable()) {
                                s.channel.finishConnect();
                                key.interestOps(SelectionKey.OP_WRITE);
                            }
                            if (key.isValid() && key.isWritable()) {
                                ByteBuffer out = ByteBuffer.wrap(s.request, s.written, s.request.length - s.written);
                                s.written += s.channel.write(out);
                                if (s.written == s.request.length) {
                                    key.interestOps(SelectionKey.OP_READ);
                                }
                            }
                            if (key.isValid() && key.isReadable()) {
                                read(key, s, now);
                            }
                        } catch (IOException | RuntimeException e) {
                            end(s, key, e.toString());
                        }
                    }
                    keys.clear();
                }
            } catch (IOException | ClosedSelectorException e) {
                // closing
            }
        }

        private void read(SelectionKey key, Stream s, long now) throws IOException {
            while (true) {
                buf.clear();
                int n = s.channel.read(buf);
                if (n < 0) {
                    end(s, key, s.readyAt == 0 ? "closed before ready" : null);
                    return;
                }
                if (n == 0) {
                    return;
                }
                buf.flip();
                buf.get(bytes, 0, n);
                feed(s, bytes, n, now);
                if (n < bytes.length) {
                    return;
                }
            }
        }

        private void end(Stream s, SelectionKey key, String why) {
            if (s.ended) {
                return;
            }
            s.ended = true;
            if (why != null) {
                s.error = why;
            }
            if (s.readyAt == 0) {
                pending.decrementAndGet();
                failed.incrementAndGet();
            }
            if (key != null) {
                key.cancel();
            }
            try {
                s.channel.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    // ---- HTTP head, chunked framing, SSE lines ----

    private void feed(Stream s, byte[] b, int n, long now) throws IOException {
        int i = 0;
        while (i < n) {
            if (!s.inBody) {
                byte c = b[i++];
                if (c == '\n') {
                    int len = s.headLen > 0 && s.headLine[s.headLen - 1] == '\r' ? s.headLen - 1 : s.headLen;
                    s.headLen = 0;
                    headLine(s, len);
                } else {
                    if (s.headLen == s.headLine.length) {
                        if (s.headLine.length >= 16 * 1024) {
                            throw new IOException("response header line too long");
                        }
                        s.headLine = java.util.Arrays.copyOf(s.headLine, s.headLine.length * 2);
                    }
                    s.headLine[s.headLen++] = c;
                }
                continue;
            }
            if (!s.chunked) {
                sse(s, b, i, n - i, now);
                return;
            }
            switch (s.chunkState) {
                case 0 -> { // hex size, optional extensions, CRLF
                    byte c = b[i++];
                    if (c == '\n') {
                        if (s.chunkSize == 0) {
                            throw new IOException("the stream ended (last chunk)");
                        }
                        s.chunkLeft = s.chunkSize;
                        s.chunkSize = 0;
                        s.chunkSizeDone = false;
                        s.chunkState = 1;
                    } else if (!s.chunkSizeDone) {
                        int d = Character.digit(c, 16);
                        if (d >= 0) {
                            s.chunkSize = s.chunkSize * 16 + d;
                        } else {
                            s.chunkSizeDone = true; // ';' extensions or CR
                        }
                    }
                }
                case 1 -> {
                    int take = (int) Math.min(s.chunkLeft, n - i);
                    sse(s, b, i, take, now);
                    i += take;
                    s.chunkLeft -= take;
                    if (s.chunkLeft == 0) {
                        s.chunkState = 2;
                    }
                }
                default -> { // CR LF after the data
                    if (b[i++] == '\n') {
                        s.chunkState = 0;
                    }
                }
            }
        }
    }

    private void headLine(Stream s, int len) throws IOException {
        String text = new String(s.headLine, 0, len, StandardCharsets.ISO_8859_1);
        if (s.status == 0) {
            s.status = text.length() >= 12 ? Integer.parseInt(text.substring(9, 12)) : -1;
            if (s.status != 200) {
                throw new IOException("stream answered " + text);
            }
            return;
        }
        if (len == 0) {
            s.inBody = true;
            s.headLine = null;
            return;
        }
        String lower = text.toLowerCase(java.util.Locale.ROOT);
        if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
            s.chunked = true;
        }
    }

    private void sse(Stream s, byte[] b, int off, int len, long now) {
        int end = off + len;
        for (int i = off; i < end; i++) {
            byte c = b[i];
            if (c == '\n') {
                line(s, now);
                s.lineLen = 0;
            } else if (c != '\r') {
                if (s.lineLen < HEAD_BYTES) {
                    s.line[s.lineLen] = c;
                }
                s.lineLen++;
            }
        }
    }

    private void line(Stream s, long now) {
        int n = s.lineLen;
        byte[] l = s.line;
        if (n == 0) {
            if (s.hasData) {
                if (s.firstEventAt == 0) {
                    s.firstEventId = s.id;
                    s.firstEvent = s.event;
                    s.firstEventAt = now;
                    withEvent.incrementAndGet();
                }
                if (s.events < TRACKED_EVENTS) {
                    s.eventAt[(int) s.events] = now;
                }
                s.events++;
            }
            s.id = -1;
            s.event = null;
            s.hasData = false;
            return;
        }
        int seen = Math.min(n, HEAD_BYTES);
        if (l[0] == ':') {
            if (s.readyAt == 0 && startsWith(l, seen, READY)) {
                s.readyAt = now;
                pending.decrementAndGet();
                ready.incrementAndGet();
            }
            return;
        }
        if (startsWith(l, seen, "data:")) {
            s.hasData = true;
        } else if (startsWith(l, seen, "id:")) {
            int v = 3;
            while (v < seen && l[v] == ' ') {
                v++;
            }
            long x = 0;
            boolean ok = v < seen && n == seen;
            for (int i = v; i < seen && ok; i++) {
                ok = l[i] >= '0' && l[i] <= '9';
                x = x * 10 + (l[i] - '0');
            }
            s.id = ok ? x : -1;
        } else if (startsWith(l, seen, "event:")) {
            int v = 6;
            while (v < seen && l[v] == ' ') {
                v++;
            }
            s.event = new String(l, v, seen - v, StandardCharsets.UTF_8);
        }
    }

    private static boolean startsWith(byte[] l, int n, String prefix) {
        if (n < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (l[i] != prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean startsWith(byte[] l, int n, byte[] prefix) {
        if (n < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (l[i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    /** Closes every stream and stops the selector threads. */
    @Override
    public void close() {
        closed = true;
        for (Loop loop : loops) {
            try {
                loop.selector.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        synchronized (streams) {
            for (Stream s : streams) {
                try {
                    if (s.channel != null) {
                        s.channel.close();
                    }
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }
}
