package dev.parley.nats;

import dev.parley.core.FederationStore;
import dev.parley.core.Outgoing;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;

import java.io.IOException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The publishing half of the transactional outbox: takes what the store owes other gateways,
 * in commit order, publishes it to this gateway's outbox stream with {@code Nats-Msg-Id} set
 * (so a republication after a crash is dropped by the stream's duplicate window), and clears
 * the marks only up to the last record the stream acknowledged. While NATS is out of reach
 * the records stay marked (spooling) and the relay retries with backoff, in order.
 *
 * <p>Clearing marks is a commit; the relay does not wait for it before the next batch: it
 * remembers how far the stream has acknowledged and reads on from there, while a clearer
 * thread commits the clearing behind it. After a crash, marks not yet cleared are published
 * again, which the duplicate window and the receiver's dedupe absorb.
 */
final class Relay implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Relay.class.getName());
    private static final int BATCH = 256;
    private static final long IDLE_MS = 200;
    private static final long MAX_BACKOFF_MS = 2_000;
    private static final long ACK_TIMEOUT_MS = 5_000;

    private final JetStream js;
    private final GatewayConfig config;
    private final FederationStore store;
    private final InstantSource clock;
    private final Semaphore wake = new Semaphore(0);
    private final Thread thread;
    private final Thread clearer;
    /** The last position the stream acknowledged; the relay reads on after it. Relay thread only. */
    private long publishedThrough;
    /** The last position acknowledged that the clearer is to commit. */
    private final AtomicLong toClear = new AtomicLong();
    private final Semaphore clear = new Semaphore(0);
    private volatile boolean spooling;
    private volatile boolean closed;

    Relay(Connection connection, GatewayConfig config, FederationStore store, InstantSource clock) throws IOException {
        this.js = connection.jetStream();
        this.clock = clock;
        this.config = config;
        this.store = store;
        this.thread = Thread.ofVirtual().name("parley-relay").unstarted(this::loop);
        this.clearer = Thread.ofVirtual().name("parley-relay-clearer").unstarted(this::clearLoop);
    }

    void start() {
        clearer.start();
        thread.start();
    }

    void wake() {
        if (wake.availablePermits() == 0) {
            wake.release();
        }
    }

    /** Whether the last attempt to publish failed, so that what is owed waits in the spool. */
    boolean spooling() {
        return spooling;
    }

    private void loop() {
        long backoff = 100;
        while (!closed) {
            try {
                List<Outgoing> owed = store.owed(publishedThrough, BATCH);
                if (owed.isEmpty()) {
                    wake.tryAcquire(IDLE_MS, TimeUnit.MILLISECONDS);
                    continue;
                }
                if (publish(owed)) {
                    spooling = false;
                    backoff = 100;
                } else {
                    spooling = true;
                    Thread.sleep(backoff);
                    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "relay pass failed; it tries again", e);
                spooling = true;
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    /**
     * Publishes a batch, all in flight at once, and clears the marks through the last record
     * of the unbroken acknowledged prefix. Returns whether the whole batch went.
     */
    private boolean publish(List<Outgoing> owed) throws InterruptedException {
        List<Publication> publications = Publication.plan(owed);
        List<CompletableFuture<PublishAck>> acks = new ArrayList<>(publications.size());
        for (int k = 0; k < publications.size(); k++) {
            Publication publication = publications.get(k);
            NatsMessage message = NatsMessage.builder().subject(GatewayConfig.subject(config.id(), publication.gateway()))
                    .headers(publication.headers()).data(publication.body()).build();
            try {
                acks.add(js.publishAsync(message, options(config.outboxStream(),
                        k == 0 ? Optional.empty() : Optional.of(publications.get(k - 1)))));
            } catch (IllegalStateException disconnected) {
                break; // jnats refuses to queue while it reconnects: the rest waits, marked, in order
            }
        }
        int acknowledged = 0;
        for (CompletableFuture<PublishAck> ack : acks) {
            try {
                ack.get(ACK_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                acknowledged++;
            } catch (ExecutionException | TimeoutException e) {
                LOG.log(Level.FINE, "publish not acknowledged; spooling", e);
                break;
            }
        }
        long through = Publication.through(owed, publications.subList(0, acknowledged));
        if (through >= 0) {
            publishedThrough = through;
            toClear.accumulateAndGet(through, Math::max);
            clear.release();
        }
        return acknowledged == publications.size();
    }

    /**
     * How a publication goes out: into this gateway's outbox stream only and, but for the
     * first of a batch, only right after the one before it. All of a batch is in flight at
     * once; if one is lost (a NATS server dies under it) while the next reaches the stream,
     * the next would be stored first and the lost one, published again, after it: out of the
     * order it was committed in. With the stream's last message id as a precondition the next
     * is refused instead, and the batch goes again from the lost one. The first of a batch
     * needs none: everything before it was acknowledged. A publication already stored (its
     * acknowledgement was lost) is answered as a duplicate before the precondition is looked at.
     */
    static PublishOptions options(String stream, Optional<Publication> previous) {
        PublishOptions.Builder options = PublishOptions.builder().expectedStream(stream);
        previous.ifPresent(p -> options.expectedLastMsgId(p.dedupeId()));
        return options.build();
    }

    /**
     * One message to the outbox stream: an envelope, or the steps owed to one gateway in a
     * batch, several in one record (an envelope costs its sender's gateway one record, not
     * one per step). {@code members} are the indexes, in the batch, of the records it carries.
     */
    record Publication(String gateway, String dedupeId, byte[] body, List<Integer> members,
                       Optional<String> traceparent) {
        /** JetStream's dedupe id, and an envelope's span for whoever reads the stream (W3C traceparent). */
        Headers headers() {
            Headers headers = new Headers().add("Nats-Msg-Id", dedupeId);
            traceparent.ifPresent(t -> headers.add(Wire.TRACEPARENT, t));
            return headers;
        }

        /** Most steps one record carries: one batch's worth. */
        static final int MAX_STEPS = BATCH;
        /**
         * Most bytes of steps one record gathers: a step's detail (a failure's reason) may be
         * as large as a request body, and a record must stay within what the receiver reads
         * and NATS carries. A step larger than this goes alone, as every step used to.
         */
        static final int MAX_STEPS_BYTES = 64 * 1024;

        /**
         * The batch as messages, each placed where its first record stands: envelopes one by
         * one, in order (per target gateway, the order they were committed), the steps for
         * each gateway gathered. A republication after a crash may group steps otherwise,
         * under other ids; the receiver folds a step it has already folded as a no-op.
         */
        static List<Publication> plan(List<Outgoing> owed) {
            List<List<Integer>> messages = new ArrayList<>(); // the records of each message, by first record
            Map<String, List<Integer>> filling = new HashMap<>(); // per gateway, its steps message still open
            Map<String, Integer> filled = new HashMap<>(); // and the bytes it carries so far
            for (int i = 0; i < owed.size(); i++) {
                if (owed.get(i) instanceof Outgoing.Ack ack) {
                    int bytes = bytes(ack.step());
                    List<Integer> steps = filling.get(ack.gateway());
                    if (steps == null || steps.size() == MAX_STEPS
                            || filled.get(ack.gateway()) + bytes > MAX_STEPS_BYTES) {
                        steps = new ArrayList<>();
                        filling.put(ack.gateway(), steps);
                        filled.put(ack.gateway(), 0);
                        messages.add(steps);
                    }
                    steps.add(i);
                    filled.merge(ack.gateway(), bytes, Integer::sum);
                } else {
                    messages.add(List.of(i));
                }
            }
            return messages.stream().map(members -> of(owed, members)).toList();
        }

        /** A step's size in a record, near enough: its text fields (UTF-8 at most 3 bytes a char) and the framing. */
        private static int bytes(dev.parley.core.RemoteStep step) {
            return 3 * (step.ref().length() + step.detail().length()) + 100;
        }

        private static Publication of(List<Outgoing> owed, List<Integer> members) {
            return switch (owed.get(members.getFirst())) {
                case Outgoing.Mail mail -> new Publication(mail.gateway(), mail.dedupeId(), Wire.mail(mail.envelope()),
                        members, Optional.of(mail.envelope().trace().context().traceparent()));
                case Outgoing.Ack first -> new Publication(first.gateway(), "steps:" + first.pos() + "-"
                        + owed.get(members.getLast()).pos(), Wire.steps(members.stream()
                        .map(i -> ((Outgoing.Ack) owed.get(i)).step()).toList()), List.copyOf(members), Optional.empty());
            };
        }

        /**
         * The position through which every record of {@code owed} went out, given the
         * publications the stream acknowledged: the last before the first record no
         * acknowledged publication carries; -1 when that is the first.
         */
        static long through(List<Outgoing> owed, List<Publication> acknowledged) {
            boolean[] carried = new boolean[owed.size()];
            acknowledged.forEach(p -> p.members().forEach(i -> carried[i] = true));
            int i = 0;
            while (i < carried.length && carried[i]) {
                i++;
            }
            return i == 0 ? -1 : owed.get(i - 1).pos();
        }
    }

    /** Commits the clearing of what the stream acknowledged, as far as it has got, behind the relay. */
    private void clearLoop() {
        long cleared = 0;
        while (!closed || toClear.get() > cleared) {
            try {
                clear.tryAcquire(IDLE_MS, TimeUnit.MILLISECONDS);
                clear.drainPermits();
                long through = toClear.get();
                if (through > cleared) {
                    store.relayed(through, clock.instant(), config.ownerAck().window());
                    cleared = through;
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (closed) {
                    return; // what is not cleared is published again after the restart, and absorbed
                }
                LOG.log(Level.WARNING, "clearing relay marks through " + toClear.get() + " failed; it tries again", e);
                try {
                    Thread.sleep(MAX_BACKOFF_MS);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        try {
            thread.join(5_000);
            clear.release(); // the clearer commits what is acknowledged, then stops
            clearer.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
