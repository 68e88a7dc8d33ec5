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
import java.util.List;
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
        List<CompletableFuture<PublishAck>> acks = new ArrayList<>(owed.size());
        for (Outgoing out : owed) {
            Headers headers = new Headers().add("Nats-Msg-Id", out.dedupeId());
            byte[] body = switch (out) {
                case Outgoing.Mail mail -> Wire.mail(mail.envelope());
                case Outgoing.Ack ack -> Wire.step(ack.step());
            };
            NatsMessage message = NatsMessage.builder().subject(GatewayConfig.subject(config.id(), out.gateway()))
                    .headers(headers).data(body).build();
            try {
                acks.add(js.publishAsync(message, PublishOptions.builder().expectedStream(config.outboxStream()).build()));
            } catch (IllegalStateException disconnected) {
                break; // jnats refuses to queue while it reconnects: the rest waits, marked, in order
            }
        }
        long through = -1;
        boolean all = acks.size() == owed.size();
        for (int i = 0; i < acks.size(); i++) {
            try {
                acks.get(i).get(ACK_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                through = owed.get(i).pos();
            } catch (ExecutionException | TimeoutException e) {
                LOG.log(Level.FINE, "publish not acknowledged; spooling", e);
                all = false;
                break;
            }
        }
        if (through >= 0) {
            publishedThrough = through;
            toClear.accumulateAndGet(through, Math::max);
            clear.release();
        }
        return all;
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
