package dev.parley.bench.http;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Many mostly idle {@link SseStream}s read by a few selector threads instead of a thread
 * each: their sockets turn non-blocking, one read buffer serves each thread, and a stream
 * costs its parser state only. Listeners are called on the selector threads.
 */
public final class SseFleet implements AutoCloseable {
    private final Loop[] loops;
    private final Thread[] threads;
    private final AtomicInteger next = new AtomicInteger();
    private volatile boolean closed;

    public SseFleet(int selectorThreads) throws IOException {
        this.loops = new Loop[Math.max(1, selectorThreads)];
        this.threads = new Thread[loops.length];
        for (int i = 0; i < loops.length; i++) {
            loops[i] = new Loop(Selector.open());
            threads[i] = Thread.ofPlatform().daemon().name("bench-sse-fleet-" + i).start(loops[i]);
        }
    }

    /**
     * Hands an open stream to one of the selector threads, which reads it from now on; it must
     * have been opened on a {@link HttpConnection#selectable} connection.
     */
    public void add(SseStream stream) throws IOException {
        SocketChannel channel = stream.socket.getChannel();
        if (channel == null) {
            throw new IllegalArgumentException("a stream read by a fleet is opened on a selectable connection");
        }
        channel.configureBlocking(false);
        Loop loop = loops[Math.floorMod(next.getAndIncrement(), loops.length)];
        loop.incoming.add(stream);
        loop.selector.wakeup();
    }

    private final class Loop implements Runnable {
        final Selector selector;
        final Queue<SseStream> incoming = new ConcurrentLinkedQueue<>();
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
                    for (SseStream s = incoming.poll(); s != null; s = incoming.poll()) {
                        try {
                            s.socket.getChannel().register(selector, SelectionKey.OP_READ, s);
                            s.feedPending();
                        } catch (IOException | RuntimeException e) {
                            s.failed(e);
                        }
                    }
                    var keys = selector.selectedKeys();
                    for (SelectionKey key : keys) {
                        SseStream s = (SseStream) key.attachment();
                        try {
                            if (key.isValid() && key.isReadable()) {
                                read(s);
                            }
                        } catch (IOException | RuntimeException e) {
                            key.cancel();
                            s.failed(e);
                        }
                    }
                    keys.clear();
                }
            } catch (IOException | ClosedSelectorException e) {
                // closing
            } finally {
                closeAll();
            }
        }

        private void closeAll() {
            for (SelectionKey key : selector.keys()) {
                ((SseStream) key.attachment()).close();
            }
            for (SseStream s = incoming.poll(); s != null; s = incoming.poll()) {
                s.close();
            }
            try {
                selector.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }

        private void read(SseStream s) throws IOException {
            while (true) {
                buf.clear();
                int n = s.socket.getChannel().read(buf);
                if (n < 0) {
                    s.end(null);
                    return;
                }
                if (n == 0) {
                    return;
                }
                buf.flip();
                buf.get(bytes, 0, n);
                s.feed(bytes, 0, n);
                if (n < bytes.length) {
                    return;
                }
            }
        }
    }

    /** Stops the selector threads; they close every stream they read. */
    @Override
    public void close() throws InterruptedException {
        closed = true;
        for (Loop loop : loops) {
            loop.selector.wakeup();
        }
        for (Thread t : threads) {
            t.join(10_000);
        }
    }
}
