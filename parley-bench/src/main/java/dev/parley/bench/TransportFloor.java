package dev.parley.bench;

import dev.parley.bench.http.HttpConnection;
import dev.parley.core.Tokens;
import dev.parley.server.HubConfig;
import dev.parley.server.http.Connections;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.HttpEdge;
import dev.parley.server.http.Routes;
import dev.parley.server.metrics.Metrics;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The floor under {@code bench compare}'s Parley side: the hub's HTTP edge ({@link HttpEdge} with
 * its {@link Routes} and {@link Connections}, the same bench senders and SSE readers) doing
 * none of the hub's work — no authentication, policy, JSON, store or delivery tracking. A POST
 * to {@code /v1/messages} names its inbox by number in {@code "to"}; the answer is a 202 with
 * the inbox's next seq, and the body goes out on that inbox's stream as one frame with that
 * seq. With a group commit ({@link Kind#HTTP_FSYNC}, {@link Kind#HTTP_DIRECT}), one writer thread
 * appends the bodies of everything queued to a file and forces it before any of them is answered,
 * as the hub's writer does, so the floor of a durable send on this transport is measured too.
 *
 * <p>Who writes a frame: the stream's own virtual thread, woken for it, as the hub's inbox streams
 * do today; or, with {@link Kind#HTTP_DIRECT}, the writer itself right after the commit, no stream
 * thread woken. That floor measures what an edge whose streams are written by the committing
 * thread would give (docs/idle-streams-edge.md); here the writer's write blocks on a slow
 * reader, which a hub could not accept, and the bench's readers never are.
 *
 * <p>It is a measuring instrument, not a hub: tokens are inbox numbers and nothing is checked.
 * It listens on 127.0.0.1 only and lives for one bench run.
 */
final class TransportFloor implements AutoCloseable {
    private static final byte[] TO_FIELD = "\"to\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] READY = ": parley ready\n\n".getBytes(StandardCharsets.US_ASCII);

    /** A floor: what a send's answer waits for, and who writes its frame to the stream. */
    enum Kind {
        /** Answered at once; the stream's thread writes the frame. */
        HTTP("http", "floorHttp"),
        /** Answered after the group commit; the stream's thread writes the frame. */
        HTTP_FSYNC("http+fsync", "floorHttpFsync"),
        /** Answered after the group commit, whose writer has written the frame to the stream itself. */
        HTTP_DIRECT("http+direct", "floorHttpDirect");

        /** The side's name in the bench's table. */
        final String side;
        /** The side's key in the bench's JSON. */
        final String json;

        Kind(String side, String json) {
            this.side = side;
            this.json = json;
        }
    }

    /**
     * One inbox: its seq, the frames its stream's thread has yet to write, and with {@link
     * Kind#HTTP_DIRECT} the stream's body, which only the writer's thread writes to once set.
     */
    private record Inbox(AtomicLong seq, LinkedBlockingQueue<byte[]> frames, AtomicReference<OutputStream> direct) {
        Inbox() {
            this(new AtomicLong(), new LinkedBlockingQueue<>(), new AtomicReference<>());
        }

        /** Gives the body its seq and writes or queues its frame; returns the seq. */
        long accept(byte[] body) throws IOException {
            long s = seq.incrementAndGet();
            byte[] head = ("id: " + s + "\nevent: message\ndata: ").getBytes(StandardCharsets.US_ASCII);
            byte[] frame = new byte[head.length + body.length + 2];
            System.arraycopy(head, 0, frame, 0, head.length);
            System.arraycopy(body, 0, frame, head.length, body.length);
            frame[frame.length - 2] = '\n';
            frame[frame.length - 1] = '\n';
            OutputStream out;
            synchronized (this) { // against the stream taking over its queue
                out = direct.get();
                if (out == null) {
                    frames.add(frame);
                    return s;
                }
            }
            out.write(frame);
            out.flush();
            return s;
        }
    }

    /** A send waiting for the group commit. */
    private record Pending(Inbox inbox, byte[] body, CompletableFuture<Long> seq) {
    }

    private final Kind kind;
    private final int senders;
    private final int size;
    private final PrintWriter err;
    private final Inbox[] inboxes;
    private final Path dir;
    private final FileChannel log;
    private final LinkedBlockingQueue<Pending> pending = new LinkedBlockingQueue<>();
    private final Thread writer;
    private final Connections connections;
    private final HttpEdge server;
    private final InboxArrivals[] readers;
    /** Released at {@link #close}: the streams of {@link Kind#HTTP_DIRECT} wait on it, their thread idle. */
    private final CountDownLatch closed = new CountDownLatch(1);

    /** Starts the floor's server (and with a group commit its writer on a temporary file) and opens one stream per inbox. */
    TransportFloor(Kind kind, int senders, int inboxes, int size, PrintWriter err) throws Exception {
        this.kind = kind;
        this.senders = senders;
        this.size = size;
        this.err = err;
        this.inboxes = new Inbox[inboxes];
        for (int i = 0; i < inboxes; i++) {
            this.inboxes[i] = new Inbox();
        }
        if (kind != Kind.HTTP) {
            dir = Files.createTempDirectory("parley-bench-floor-");
            log = FileChannel.open(dir.resolve("log"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            writer = Thread.ofPlatform().daemon().name("bench-floor-writer").start(this::commitLoop);
        } else {
            dir = null;
            log = null;
            writer = null;
        }
        HubConfig.Transport transport = HubConfig.Transport.DEFAULTS;
        connections = new Connections(transport.idleTimeout(), transport.headerTimeout(), transport.bodyTimeout(),
                transport.maxConnectionsPerAddress(), new Metrics());
        Routes routes = new Routes(new Tokens("unused", java.util.Map.of()), 1 << 20, 1 << 20, connections)
                .post("/v1/messages", this::send)
                .get("/v1/inbox/stream", this::stream);
        server = HttpEdge.start("127.0.0.1", 0, routes, connections);
        readers = new InboxArrivals[inboxes];
        try {
            CountDownLatch ready = new CountDownLatch(inboxes);
            for (int i = 0; i < inboxes; i++) {
                InboxArrivals reader = new InboxArrivals(ready);
                reader.stream = new HttpConnection("127.0.0.1", server.port(), 10_000)
                        .openStream("/v1/inbox/stream", Integer.toString(i), "", reader, false);
                readers[i] = reader;
                Thread.ofPlatform().daemon().name("bench-floor-sse-" + i).start(reader.stream);
            }
            if (!ready.await(15, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the floor's streams did not open within 15 s");
            }
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    private void send(Exchange ex) throws InterruptedException, IOException {
        byte[] body = ex.rawBody();
        int i = inboxNumber(body);
        if (i < 0 || i >= inboxes.length) {
            ex.empty(400);
            return;
        }
        long seq;
        if (log == null) {
            seq = inboxes[i].accept(body);
        } else {
            Pending p = new Pending(inboxes[i], body, new CompletableFuture<>());
            pending.add(p);
            try {
                seq = p.seq().get();
            } catch (ExecutionException e) {
                ex.empty(500);
                return;
            }
        }
        ex.send(202, "application/json",
                ("{\"seq\":" + seq + ",\"state\":\"accepted\"}").getBytes(StandardCharsets.US_ASCII));
    }

    private void stream(Exchange ex) throws IOException, InterruptedException {
        String bearer = ex.header("Authorization").orElse("");
        Inbox inbox = inboxes[Integer.parseInt(bearer.substring("Bearer ".length()))];
        try (OutputStream out = ex.stream("text/event-stream")) {
            out.write(READY);
            out.flush();
            if (kind == Kind.HTTP_DIRECT) {
                synchronized (inbox) { // frames queued before this point go first, in order
                    for (byte[] frame; (frame = inbox.frames().poll()) != null; ) {
                        out.write(frame);
                    }
                    out.flush();
                    inbox.direct().set(out);
                }
                closed.await();
                return;
            }
            while (closed.getCount() > 0) {
                byte[] frame = inbox.frames().poll(200, TimeUnit.MILLISECONDS);
                if (frame != null) {
                    out.write(frame);
                    out.flush();
                }
            }
        }
    }

    /** The group commit: everything queued is appended and forced, then answered. */
    private void commitLoop() {
        List<Pending> batch = new ArrayList<>();
        try {
            while (true) {
                batch.add(pending.take());
                pending.drainTo(batch);
                ByteBuffer[] bodies = batch.stream().map(p -> ByteBuffer.wrap(p.body())).toArray(ByteBuffer[]::new);
                while (bodies[bodies.length - 1].hasRemaining()) {
                    log.write(bodies);
                }
                log.force(false);
                for (Pending p : batch) {
                    p.seq().complete(p.inbox().accept(p.body()));
                }
                batch.clear();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            batch.forEach(p -> p.seq().completeExceptionally(e));
            pending.forEach(p -> p.seq().completeExceptionally(e));
        }
    }

    /** The digits of the body's first {@code "to":"…"}, or -1. */
    private static int inboxNumber(byte[] body) {
        int at = ArrivalKey.indexOf(body, body.length, TO_FIELD);
        if (at < 0) {
            return -1;
        }
        int n = 0;
        int d = at + TO_FIELD.length;
        for (; d < body.length && body[d] >= '0' && body[d] <= '9'; d++) {
            n = n * 10 + (body[d] - '0');
        }
        return d > at + TO_FIELD.length ? n : -1;
    }

    /** Runs the bench's closed-loop senders against the floor, as {@link ParleyWorkload#measure} does against a hub. */
    LoadResult measure(Warmup warmup, int seconds, int drainSeconds, LoadResult.Edge atStart, LoadResult.Edge atEnd)
            throws Exception {
        String text = "x".repeat(size);
        byte[][] bodies = new byte[inboxes.length][];
        for (int i = 0; i < inboxes.length; i++) {
            // one length for every body: a sender's request head carries one Content-Length
            String to = String.format(Locale.ROOT, "%06d", i);
            bodies[i] = ("{\"to\":\"" + to + "\",\"text\":\"" + text + "\"}").getBytes(StandardCharsets.UTF_8);
        }
        ClosedLoopSender[] workers = new ClosedLoopSender[senders];
        for (int i = 0; i < senders; i++) {
            HttpConnection conn = new HttpConnection("127.0.0.1", server.port(), 30_000);
            byte[] head = HttpConnection.head("POST", "/v1/messages", conn.hostHeader(), "sender-" + i,
                    "application/json", bodies[0].length);
            workers[i] = new ClosedLoopSender(i, conn, head, bodies);
        }
        BenchSupport.progress(err, "floor " + kind.side + ": " + senders + " senders -> "
                + inboxes.length + " inboxes, warm-up " + warmup.describe() + ", window " + seconds + " s");
        return LoadResult.measure(workers, "bench-floor", readers, warmup, seconds, drainSeconds, atStart, atEnd);
    }

    @Override
    public void close() throws IOException {
        closed.countDown();
        for (InboxArrivals reader : readers) {
            if (reader != null && reader.stream != null) {
                reader.stream.close();
            }
        }
        server.close();
        connections.close();
        if (writer != null) {
            writer.interrupt();
            log.close();
            Files.deleteIfExists(dir.resolve("log"));
            Files.deleteIfExists(dir);
        }
    }
}
