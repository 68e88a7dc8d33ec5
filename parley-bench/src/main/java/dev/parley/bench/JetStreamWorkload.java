package dev.parley.bench;

import io.nats.client.Connection;
import io.nats.client.Consumer;
import io.nats.client.Dispatcher;
import io.nats.client.ErrorListener;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The JetStream side of {@code bench compare}: the same closed-loop workload as
 * {@link ParleyWorkload}, on one file-storage stream over {@code bench.>}. Each of the M
 * subjects {@code bench.in-NNNN} stands for an inbox and has its own ordered push consumer
 * (on a consumer connection, each with its own dispatcher thread); N publishers each
 * publish synchronously (waiting for the PubAck) the same request bodies the Parley senders
 * POST, publisher <i>i</i>'s <i>k</i>-th message going to subject <i>(i + k) mod M</i>.
 * With a window W above 1 (the JetStream side of a batch comparison), each publisher
 * publishes asynchronously ({@code publishAsync}) with up to W PubAcks outstanding, taking
 * the oldest before publishing past W; a message's ack time is when its publisher took it.
 * Latency is publish start to the message's arrival at its consumer, matched by stream seq.
 */
final class JetStreamWorkload implements AutoCloseable {
    static final String STREAM = "BENCH";

    private final String url;
    private final int publishers;
    private final int subjects;
    private final int size;
    private final int connections;
    private final int window;
    private final PrintWriter err;
    private final List<Connection> opened = new ArrayList<>();
    private final String[] subjectNames;
    private InboxArrivals[] readers = new InboxArrivals[0];

    /**
     * Reports what goes wrong on a connection; stays quiet about the ordered consumers' routine
     * flow control and heartbeats (jnats' default listener logs each of those).
     */
    private final ErrorListener listener = new ErrorListener() {
        @Override
        public void errorOccurred(Connection conn, String error) {
            BenchSupport.progress(err, "jetstream: error on " + conn.getOptions().getConnectionName() + ": " + error);
        }

        @Override
        public void exceptionOccurred(Connection conn, Exception exp) {
            BenchSupport.progress(err, "jetstream: exception on " + conn.getOptions().getConnectionName() + ": " + exp);
        }

        @Override
        public void slowConsumerDetected(Connection conn, Consumer consumer) {
            BenchSupport.progress(err, "jetstream: slow consumer on " + conn.getOptions().getConnectionName());
        }
    };

    /**
     * @param connections how many client connections the publishers share (publishers are
     *                    spread over them round-robin; equal to {@code publishers}: one each)
     */
    JetStreamWorkload(String url, int publishers, int subjects, int size, int connections, PrintWriter err) {
        this(url, publishers, subjects, size, connections, 1, err);
    }

    /** @param window PubAcks each publisher may have outstanding (1: synchronous publishes) */
    JetStreamWorkload(String url, int publishers, int subjects, int size, int connections, int window, PrintWriter err) {
        this.url = url;
        this.window = window;
        this.publishers = publishers;
        this.subjects = subjects;
        this.size = size;
        this.connections = Math.max(1, Math.min(connections, publishers));
        this.err = err;
        subjectNames = new String[subjects];
        for (int i = 0; i < subjects; i++) {
            subjectNames[i] = String.format(Locale.ROOT, "bench.in-%04d", i);
        }
    }

    private Connection connect(String name) throws IOException, InterruptedException {
        Options options = new Options.Builder().server(url).connectionName(name).maxReconnects(0)
                .connectionTimeout(Duration.ofSeconds(10)).errorListener(listener).build();
        Connection c = Nats.connect(options);
        synchronized (opened) {
            opened.add(c);
        }
        return c;
    }

    /** Creates the stream and one ordered push consumer per subject. */
    void setUp() throws Exception {
        Connection admin = connect("bench-admin");
        JetStreamManagement jsm = admin.jetStreamManagement();
        jsm.addStream(StreamConfiguration.builder().name(STREAM).subjects("bench.>").storageType(StorageType.File)
                .replicas(1).build());
        Connection consumers = connect("bench-consumers");
        JetStream js = consumers.jetStream();
        readers = new InboxArrivals[subjects];
        for (int i = 0; i < subjects; i++) {
            InboxArrivals reader = new InboxArrivals(null);
            readers[i] = reader;
            Dispatcher d = consumers.createDispatcher();
            js.subscribe(subjectNames[i], d, msg -> {
                long now = System.nanoTime();
                reader.arrived(msg.metaData().streamSequence(), now);
            }, false, PushSubscribeOptions.builder().ordered(true).build());
        }
        BenchSupport.progress(err, "created stream " + STREAM + " (file storage, subjects bench.>) and " + subjects
                + " ordered push consumers");
    }

    /** One publisher: synchronous, or asynchronous with up to {@link #window} PubAcks outstanding. */
    private final class Publisher implements LoadResult.Worker {
        /** A message published and not yet acknowledged. */
        private record Pending(long start, int target, CompletableFuture<PublishAck> ack) {
        }

        private final int index;
        private final JetStream js;
        private final byte[][] bodies;
        private final SendLog log = new SendLog();
        private final ArrayDeque<Pending> outstanding = new ArrayDeque<>();
        private volatile boolean stop;

        Publisher(int index, JetStream js, byte[][] bodies) {
            this.index = index;
            this.js = js;
            this.bodies = bodies;
        }

        @Override
        public void stop() {
            stop = true;
        }

        @Override
        public SendLog log() {
            return log;
        }

        @Override
        public void run() {
            long k = index;
            while (!stop) {
                int target = (int) (k++ % subjects);
                long t0 = System.nanoTime();
                try {
                    if (window == 1) {
                        PublishAck ack = js.publish(subjectNames[target], bodies[target]);
                        log.record(t0, System.nanoTime(), target, ack.getSeqno());
                        continue;
                    }
                    outstanding.add(new Pending(t0, target, js.publishAsync(subjectNames[target], bodies[target])));
                    if (outstanding.size() >= window) {
                        takeOldest();
                    }
                } catch (IOException | JetStreamApiException | RuntimeException | ExecutionException e) {
                    log.error(e.getClass().getSimpleName());
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            while (!outstanding.isEmpty()) { // what is still in flight counts like any other publish
                try {
                    takeOldest();
                } catch (ExecutionException | RuntimeException e) {
                    log.error(e.getClass().getSimpleName());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        /** Waits for the oldest outstanding PubAck and logs its message. */
        private void takeOldest() throws ExecutionException, InterruptedException {
            Pending oldest = outstanding.poll();
            PublishAck ack = oldest.ack().get();
            log.record(oldest.start(), System.nanoTime(), oldest.target(), ack.getSeqno());
        }
    }

    /** Like {@link ParleyWorkload#measure}: warm-up, window, stop, drain, figures. */
    LoadResult measure(Warmup warmup, int seconds, int drainSeconds, LoadResult.Edge atStart, LoadResult.Edge atEnd)
            throws Exception {
        String[] inboxIds = new String[subjects];
        for (int i = 0; i < subjects; i++) {
            inboxIds[i] = ParleyWorkload.inboxId(i); // the same bytes the Parley senders POST
        }
        byte[][] bodies = ParleyWorkload.bodies(inboxIds, size);
        JetStream[] contexts = new JetStream[connections];
        for (int c = 0; c < connections; c++) {
            contexts[c] = connect("bench-pub-" + c).jetStream();
        }
        Publisher[] workers = new Publisher[publishers];
        for (int i = 0; i < publishers; i++) {
            workers[i] = new Publisher(i, contexts[i % connections], bodies);
        }
        BenchSupport.progress(err, "publishing: " + publishers + " publishers on " + connections + " connections -> "
                + subjects + " subjects" + (window > 1 ? ", publishAsync with " + window + " acks outstanding" : "")
                + ", warm-up " + warmup.describe() + ", window " + seconds + " s");
        return LoadResult.measure(workers, "bench-pub", readers, warmup, seconds, drainSeconds, atStart, atEnd);
    }

    @Override
    public void close() {
        List<Connection> all;
        synchronized (opened) {
            all = new ArrayList<>(opened);
            opened.clear();
        }
        CountDownLatch done = new CountDownLatch(all.size());
        for (Connection c : all) {
            Thread.ofVirtual().start(() -> {
                try {
                    c.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            });
        }
        try {
            done.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
