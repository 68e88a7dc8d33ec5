package dev.parley.nats;

import dev.parley.core.Arrivals;
import dev.parley.core.FederationStore;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.StreamContext;
import io.nats.client.ConsumeOptions;
import io.nats.client.ConsumerContext;
import io.nats.client.IterableConsumer;
import io.nats.client.JetStreamStatusCheckedException;
import io.nats.client.Message;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The consuming half: for each other gateway, a durable consumer named after this gateway on
 * that gateway's outbox, filtered on exactly the subject routed here, acked a batch at a time.
 * What has arrived is handed to {@link Arrivals} as a batch, committed in one transaction with
 * the source's cursor; a record at or below the cursor (a redelivery after a crash) is acked
 * and skipped, so a restarted gateway resumes each source where it stopped. A batch that
 * cannot be committed (the store failing) is retried in place, so nothing after it overtakes it.
 */
final class Ingest implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Ingest.class.getName());
    private static final int BATCH = 256;
    private static final long FETCH_EXPIRES_MS = 1_000;
    /** How long to wait for a record that is already on its way, to fill a batch. */
    private static final long ARRIVED_MS = 1;
    private static final long RETRY_MS = 500;
    private static final java.time.Duration ACK_WAIT = java.time.Duration.ofMinutes(2);

    private final Connection connection;
    private final String self;
    private final Arrivals arrivals;
    private final long maxRecordBytes;
    private final Map<String, Long> cursors;
    /** Told after each committed batch: taking mail owes its source an accepted (or failed) step. */
    private final Runnable owed;
    private final Set<String> following = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong unreadable = new AtomicLong();
    private volatile boolean closed;

    Ingest(Connection connection, String self, Arrivals arrivals, FederationStore store, long maxRecordBytes,
           Runnable owed) {
        this.connection = connection;
        this.owed = owed;
        this.self = self;
        this.arrivals = arrivals;
        this.maxRecordBytes = maxRecordBytes;
        this.cursors = new ConcurrentHashMap<>(store.cursors());
    }

    /** Starts taking in what {@code source} routes here, unless already doing so. */
    void follow(String source) {
        if (source.equals(self) || closed || !following.add(source)) {
            return;
        }
        LOG.info("gateway " + self + " ingests from gateway " + source);
        threads.add(Thread.ofVirtual().name("parley-ingest-" + source).start(() -> loop(source)));
    }

    Map<String, Long> cursors() {
        return Map.copyOf(cursors);
    }

    long refused() {
        return refused.get();
    }

    long unreadable() {
        return unreadable.get();
    }

    private void loop(String source) {
        while (!closed) {
            try {
                ConsumerContext context = resume(source);
                // the consumer sequence of the last record taken from this consumer: 0 when made afresh
                long delivered = context.getCachedConsumerInfo().getDelivered().getConsumerSequence();
                takeFrom(source, context, delivered);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                if (closed) {
                    return;
                }
                LOG.log(Level.FINE, "ingest from " + source + " interrupted; it starts again", e);
                try {
                    Thread.sleep(RETRY_MS);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    /**
     * Takes in from one consumer until it is closed, or until a record is found missing in its
     * deliveries (a record lost on its way, a reconnect, while later ones came): taking those
     * would move the cursor past it, and acking them would ack it, so the caller starts again
     * with a consumer made afresh at the cursor.
     */
    private void takeFrom(String source, ConsumerContext context, long delivered) throws Exception {
        try (IterableConsumer consumer = context.iterate(ConsumeOptions.builder().batchSize(BATCH)
                .expiresIn(FETCH_EXPIRES_MS).build())) {
            while (!closed) {
                List<Message> batch = next(consumer);
                int inOrder = inOrder(batch.stream().map(m -> m.metaData().consumerSequence()).toList(), delivered);
                if (inOrder > 0) {
                    take(source, batch.subList(0, inOrder));
                    delivered = batch.get(inOrder - 1).metaData().consumerSequence();
                }
                if (inOrder < batch.size()) {
                    LOG.warning("gateway " + self + ": a record from gateway " + source + " went missing after"
                            + " consumer sequence " + delivered + "; taking in again from stream seq "
                            + (cursors.getOrDefault(source, 0L) + 1));
                    return;
                }
            }
        }
    }

    /**
     * Waits for one record, then takes what else has already arrived, up to a batch: a busy
     * source is committed a batch per fsync, a quiet one record by record without delay.
     */
    private static List<Message> next(IterableConsumer consumer) throws InterruptedException,
            JetStreamStatusCheckedException {
        List<Message> batch = new ArrayList<>();
        Message message = consumer.nextMessage(FETCH_EXPIRES_MS);
        while (message != null) {
            batch.add(message);
            message = batch.size() < BATCH ? consumer.nextMessage(ARRIVED_MS) : null;
        }
        return batch;
    }

    /**
     * How many of a batch's records came in delivery order right after {@code previous} (the
     * consumer numbers each delivery 1, 2, 3 …, a consumer made afresh from 1): a gap means a
     * record was delivered and never arrived, and nothing from it on may be taken.
     */
    static int inOrder(List<Long> consumerSequences, long previous) {
        int n = 0;
        for (long sequence : consumerSequences) {
            if (sequence != previous + 1) {
                return n;
            }
            previous = sequence;
            n++;
        }
        return n;
    }

    /**
     * The durable consumer, made afresh to start right after the cursor. The cursor in SQLite is
     * the truth: records fetched but not acked when the gateway stopped would otherwise come back
     * only after the ack wait, behind newer ones, and be taken out of order.
     */
    private ConsumerContext resume(String source) throws IOException, JetStreamApiException {
        StreamContext stream = connection.getStreamContext(GatewayConfig.outboxStream(source));
        try {
            stream.deleteConsumer(self);
        } catch (JetStreamApiException absent) {
            LOG.log(Level.FINE, "no consumer " + self + " on the outbox of " + source + " yet", absent);
        }
        long cursor = cursors.getOrDefault(source, 0L);
        ConsumerConfiguration.Builder consumer = ConsumerConfiguration.builder().durable(self)
                .filterSubject(GatewayConfig.subject(source, self)).ackPolicy(AckPolicy.All)
                .ackWait(ACK_WAIT);
        if (cursor == 0) {
            consumer.deliverPolicy(DeliverPolicy.All);
        } else {
            consumer.deliverPolicy(DeliverPolicy.ByStartSequence).startSequence(cursor + 1);
        }
        return stream.createOrUpdateConsumer(consumer.build());
    }

    /**
     * A batch: what is past the cursor is committed in one transaction with the cursor, then
     * everything is acked; retried as a whole while the store fails, so nothing overtakes it.
     */
    private void take(String source, List<Message> batch) throws InterruptedException {
        long cursor = cursors.getOrDefault(source, 0L);
        List<Arrivals.Record> records = new ArrayList<>(batch.size());
        for (Message message : batch) {
            long seq = message.metaData().streamSequence();
            if (seq > cursor) { // at or below: a redelivery after a crash, already taken
                records.addAll(records(seq, message.getData(), Optional.ofNullable(message.getHeaders())
                        .map(h -> h.getFirst(Wire.TRACEPARENT))));
            }
        }
        while (!records.isEmpty() && !closed) {
            try {
                for (Arrivals.Outcome outcome : arrivals.take(source, records)) {
                    switch (outcome) {
                        case REFUSED -> refused.incrementAndGet();
                        case UNREADABLE -> unreadable.incrementAndGet();
                        case TAKEN, DUPLICATE -> {
                        }
                    }
                }
                cursors.merge(source, records.getLast().streamSeq(), Math::max);
                owed.run();
                break;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, records.size() + " records of gateway " + source + " from stream seq "
                        + records.getFirst().streamSeq() + " not committed; retrying", e);
                Thread.sleep(RETRY_MS);
            }
        }
        if (!closed) {
            batch.getLast().ack(); // acks the batch and everything before it: one message, not one per record
        }
    }

    /** What one outbox record holds: an envelope, several steps (all at its stream seq), or why it cannot be read. */
    private List<Arrivals.Record> records(long seq, byte[] data, Optional<String> traceparent) {
        if (data == null || data.length > maxRecordBytes) {
            return List.of(new Arrivals.Record.Unreadable(seq, "record of " + (data == null ? 0 : data.length)
                    + " bytes (limit " + maxRecordBytes + ")"));
        }
        try {
            return switch (Wire.record(data, traceparent)) {
                case Wire.Record.Mail mail -> List.of(new Arrivals.Record.Mail(seq, mail.envelope()));
                case Wire.Record.Steps steps -> steps.steps().stream()
                        .<Arrivals.Record>map(step -> new Arrivals.Record.Step(seq, step)).toList();
            };
        } catch (Wire.Unreadable e) {
            return List.of(new Arrivals.Record.Unreadable(seq, e.getMessage()));
        }
    }

    @Override
    public void close() {
        closed = true;
        threads.forEach(Thread::interrupt);
        for (Thread t : threads) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
