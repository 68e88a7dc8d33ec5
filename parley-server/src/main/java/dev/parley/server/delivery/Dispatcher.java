package dev.parley.server.delivery;

import dev.parley.core.DeliveryEvent;
import dev.parley.core.DeliveryPolicies;
import dev.parley.core.Federation;
import dev.parley.core.FederationStore;
import dev.parley.core.OwnerAckPolicy;
import dev.parley.core.DeliveryPolicy;
import dev.parley.core.DeliveryState;
import dev.parley.core.DeliveryStore;
import dev.parley.core.Envelope;
import dev.parley.core.EventStore;
import dev.parley.core.NodeId;
import dev.parley.core.Notices;
import dev.parley.core.Notifier;
import dev.parley.core.ParleyException;
import dev.parley.server.metrics.Metrics;

import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Works off what the hub owes envelopes after they are accepted: webhook pushes with
 * retries and dead letters, redelivery of envelopes not acked in time, reply deadlines,
 * and publishing again cross-gateway envelopes their owner did not confirm. New envelopes
 * for webhook nodes are pushed at once; everything else comes from the persisted schedule,
 * which a scanner reads a few times a second, so work left by a crash resumes after the
 * restart. At most {@link #PER_NODE} pushes call a node's endpoint at once and {@link #TOTAL}
 * in all: a slow endpoint holds only its own node's permits. A push's outcome is recorded
 * after its call gives the permits back, and at most {@link #UNRECORDED_PER_NODE} of a node's
 * pushes are sent and not yet recorded: what a crash makes the hub push again. A node's pushes
 * taken up at a time, running or waiting, each holding its envelope, are bounded: new
 * envelopes' up to {@link #HELD_PER_NODE}, what the scanner finds (a restart's backlog,
 * retries) up to {@link #TAKEN_PER_NODE}, and their envelopes' text and data to
 * {@link #HELD_CHARS_PER_NODE} per node and {@link #HELD_CHARS} in all. The rest waits in the
 * schedule; once a burst has filled a node's room, its pushes take the next from there as
 * they finish.
 */
public final class Dispatcher implements Notifier, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Dispatcher.class.getName());
    private static final int PER_NODE = 8;
    /**
     * Pushes of one node sent (their call begun) and not yet recorded. The records of pushes
     * answered while one commits share the next; a store that stalls (a slow disk) stops a
     * node's pushes here, so a crash then repeats at most this many, not every push taken up.
     */
    private static final int UNRECORDED_PER_NODE = 4 * PER_NODE;
    /** Pushes of one node the scanner lets be under way at once, running or waiting for a permit. */
    private static final int TAKEN_PER_NODE = 2 * PER_NODE;
    /**
     * Pushes of one node that new envelopes may have under way at once. Higher than the
     * scanner's bound: a busy endpoint's pushes are taken as they commit, from memory, and
     * only a burst past this many goes through the schedule (a store read for every push or
     * two, which at full load made webhook deliveries three times slower when the bound was
     * {@link #TAKEN_PER_NODE}).
     */
    static final int HELD_PER_NODE = 256;
    /** Characters of text and data the pushes one node has taken up may hold (one push always may). */
    static final long HELD_CHARS_PER_NODE = 4L * EventStore.PAGE_CHARS;
    /** Characters the pushes of all nodes taken up may hold: a few nodes at their bound. */
    static final long HELD_CHARS = 32L * EventStore.PAGE_CHARS;
    static final int TOTAL = 256;
    private static final long SCAN_MILLIS = 200;
    /** Due entries read per pass of the scanner (in several reads when their envelopes are large). */
    private static final int SCAN_PAGE = 256;
    private static final Set<DeliveryState> UNACKED = EnumSet.of(DeliveryState.ACCEPTED, DeliveryState.DELIVERED,
            DeliveryState.RETRY_PENDING, DeliveryState.INCIDENT);

    private final DeliveryStore store;
    private final FederationStore federation;
    /** Who owns the targets of cross-gateway envelopes: a target no gateway owns is not waited for. */
    private final Federation owners;
    private final OwnerAckPolicy ownerAck;
    private final DeliveryPolicies policies;
    private final InboxFeeds feeds;
    private final Notices notices;
    private final Courier courier;
    private final Metrics metrics;
    private final InstantSource clock;
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    /**
     * Push attempts finished in the last {@link #SETTLE_NANOS}, by envelope id. The scanner
     * reads the schedule from a snapshot that can predate an attempt's own commit; without
     * this it would repeat an attempt that had just finished.
     */
    private final Map<String, Finished> justFinished = new ConcurrentHashMap<>();
    /**
     * {@link #justFinished}'s entries in the order they were put, which the scanner prunes from
     * the oldest: a pass over the whole map (two seconds of pushes) every scan was 1.5-3 % of a busy
     * webhook hub's CPU samples (BENCHMARKS.md, "Issue 15, stop 46").
     */
    private final Queue<Finished> finishedInOrder = new ConcurrentLinkedQueue<>();
    private static final long SETTLE_NANOS = TimeUnit.SECONDS.toNanos(2);

    private record Finished(String envelopeId, int attempt, long atNanos) {
    }
    private final Map<NodeId, NodePermits> perNode = new ConcurrentHashMap<>();

    /** A node's permits: to call its endpoint, and to be sent and not yet recorded. */
    private record NodePermits(Semaphore calls, Semaphore unrecorded) {
        NodePermits() {
            this(new Semaphore(PER_NODE), new Semaphore(UNRECORDED_PER_NODE));
        }
    }
    /**
     * Pushes taken up: running, or waiting for a permit. Past a bound no more are taken for
     * the node: the rest of its due pushes stay in the schedule. A backlog of thousands (after
     * a restart, or a burst to a slow endpoint) would otherwise make as many waiting threads,
     * each holding its envelope.
     */
    private final TakenPushes taken = new TakenPushes(HELD_CHARS_PER_NODE, HELD_CHARS);
    /**
     * Nodes with due pushes left in the schedule for want of room (a new envelope's among
     * them): a push of theirs that finishes reads the next ones from the store, so a busy
     * endpoint is kept fed without waiting for the scanner.
     */
    private final Set<NodeId> behind = ConcurrentHashMap.newKeySet();
    /** Nodes whose next pushes are being read from the store now: one reader per node. */
    private final Set<NodeId> takingNext = ConcurrentHashMap.newKeySet();
    /** Nodes whose webhook failed since it last delivered: since when, the attempts that failed, the last error. */
    private final Map<NodeId, Failing> failingWebhooks = new ConcurrentHashMap<>();

    /** A webhook's run of failures, as this hub saw it since it started (the run ends at its next delivery). */
    public record Failing(Instant since, int attempts, String lastError) {
        Failing then(Failing next) {
            return new Failing(since, attempts + next.attempts, next.lastError);
        }
    }

    /** A node's webhook now: whether it is failing, and what waits for it in the schedule. */
    public record WebhookState(Optional<Failing> failing, DeliveryStore.PushesWaiting waiting) {
    }
    private final Semaphore total = new Semaphore(TOTAL);
    private final ExecutorService pushes = Executors.newVirtualThreadPerTaskExecutor();
    private final Semaphore wake = new Semaphore(0);
    /** Delivered pushes waiting to be recorded, and the turn to record them: see {@link #recordDelivered}. */
    private final Queue<Unrecorded> unrecorded = new ConcurrentLinkedQueue<>();
    private final ReentrantLock recording = new ReentrantLock();

    private record Unrecorded(DeliveryStore.Pushed pushed, CompletableFuture<Void> recorded) {
    }
    private final Thread scanner;
    private volatile boolean closed;

    public Dispatcher(DeliveryStore store, FederationStore federation, Federation owners, OwnerAckPolicy ownerAck,
                      DeliveryPolicies policies, InboxFeeds feeds, Notices notices, Courier courier, Metrics metrics,
                      InstantSource clock) {
        this.store = store;
        this.federation = federation;
        this.owners = owners;
        this.ownerAck = ownerAck;
        this.policies = policies;
        this.feeds = feeds;
        this.notices = notices;
        this.courier = courier;
        this.metrics = metrics;
        this.clock = clock;
        metrics.pushesInFlightFrom(inFlight::size);
        this.scanner = Thread.ofPlatform().name("parley-dispatcher").daemon(true).start(this::scan);
    }

    /**
     * A new envelope for a webhook node is pushed right away, or, when its node has no room or
     * pushes left behind already (it queues up behind them, oldest first), left in the schedule
     * for the node's finishing pushes (announcer thread: it reads nothing, only hands off).
     */
    @Override
    public void committed(Envelope envelope) {
        NodeId node = envelope.to();
        if (policies.webhookOf(node).isPresent() && (behind.contains(node) || !launch(envelope, HELD_PER_NODE))) {
            behind.add(node);
            // every push of the node may have finished before it was marked: then none would look
            if (taken.halfFree(node, HELD_PER_NODE)) {
                submit(() -> takeNext(node));
            }
        }
    }

    /** Lets {@code form} write the pushes of the envelopes it claims (their body and extra headers). */
    public void shapePushes(PushForm form) {
        courier.shape(form);
    }

    /** {@code node}'s webhook now (whether or not it has one: pushes may wait from before its webhook was removed). */
    public WebhookState webhookState(NodeId node) {
        return new WebhookState(Optional.ofNullable(failingWebhooks.get(node)), store.pushesWaiting(node));
    }

    /** Asks the scanner to look at the schedule now (after a redrive, say). */
    public void wake() {
        wake.release();
    }

    /**
     * Reads the due schedule a page of {@link #SCAN_PAGE} entries per pass (in several reads
     * when their envelopes are large, each read ending at {@code PAGE_CHARS}), each pass after
     * the last entry of the one before until a page comes back short: then from the oldest
     * again. Entries still being worked on stay due (a push's entry goes when its outcome is
     * recorded), so starting from the oldest each time would read the same page again and
     * again while a slow endpoint's backlog filled it, and never reach the work behind it. A
     * pass that fails is retried at the next, not at once: a fault that lasts must not turn the
     * scanner into a loop of warnings.
     */
    private void scan() {
        Optional<DeliveryStore.DueKey> after = Optional.empty();
        while (!closed) {
            try {
                int read = 0;
                do {
                    DeliveryStore.DuePage page = store.due(clock.instant(), after, SCAN_PAGE - read);
                    after = page.next(); // before the work: an entry whose handling fails holds back only its own page
                    read += page.read();
                    for (DeliveryStore.Due due : page.items()) {
                        handle(due, TAKEN_PER_NODE);
                    }
                } while (after.isPresent() && read < SCAN_PAGE && !closed);
                forgetSettled(System.nanoTime());
            } catch (RuntimeException e) {
                if (!closed) {
                    LOG.log(Level.WARNING, "delivery scan failed; retrying", e);
                }
            }
            try {
                wake.tryAcquire(SCAN_MILLIS, TimeUnit.MILLISECONDS);
                wake.drainPermits();
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /**
     * Drops the finished attempts older than {@link #SETTLE_NANOS}, oldest first. Only the scanner
     * calls it, so the head it looks at is the head it takes; an entry put again for a later
     * attempt of the same envelope stays in the map until its own turn.
     */
    private void forgetSettled(long now) {
        for (Finished oldest = finishedInOrder.peek(); oldest != null && now - oldest.atNanos() > SETTLE_NANOS;
             oldest = finishedInOrder.peek()) {
            finishedInOrder.poll();
            justFinished.remove(oldest.envelopeId(), oldest);
        }
    }

    /**
     * Works off one due entry; a push is started if its node has fewer than {@code takenAtMost}
     * under way. Whether the entry was worked off: false when it was passed by (under way,
     * just done, no room for its push).
     */
    private boolean handle(DeliveryStore.Due due, int takenAtMost) {
        Envelope envelope = due.envelope();
        Finished finished = justFinished.get(envelope.id());
        if (inFlight.contains(envelope.id()) || (due.purpose() == DeliveryStore.Purpose.PUSH && finished != null
                && due.attempt() <= finished.attempt())) {
            return false;
        }
        switch (due.purpose()) {
            case PUSH -> {
                if (UNACKED.contains(due.state()) && policies.webhookOf(envelope.to()).isPresent()) {
                    return launch(envelope.withAttempt(due.attempt()), takenAtMost);
                }
                store.forget(envelope.id(), DeliveryStore.Purpose.PUSH);
            }
            case REDELIVER -> redeliver(due);
            case RELEASE -> released(due);
            case OWNER_ACK -> ownerSilent(due);
            case DEADLINE -> {
                long withinMs = due.dueAt().toEpochMilli() - envelope.createdAt().toEpochMilli();
                store.deadlineMissed(envelope.id(), withinMs, clock.instant(),
                        notices.incident(envelope, withinMs, clock.instant()));
                metrics.incidents.increment();
            }
        }
        return true;
    }

    /** The envelope was delivered but not acked in time: deliver it again, or give up after the last attempt. */
    private void redeliver(DeliveryStore.Due due) {
        Envelope envelope = due.envelope();
        DeliveryPolicy policy = policies.of(envelope.to());
        if (!UNACKED.contains(due.state()) || policy.redeliverAfter().isEmpty()) {
            store.forget(envelope.id(), DeliveryStore.Purpose.REDELIVER);
            return;
        }
        int delivered = due.attempt() - 1;
        if (policy.retry().exhaustedAfter(delivered)) {
            deadLetter(envelope, "not acked after " + delivered + " deliveries", delivered);
            return;
        }
        deliverAgain(store.redeliver(envelope.id(), due.attempt(), clock.instant(),
                "no ack within " + policy.redeliverAfter().get().toMillis() + " ms"), policy);
    }

    /** A claim the sweep took back has waited out its backoff: deliver the envelope again, unless it moved on. */
    private void released(DeliveryStore.Due due) {
        Envelope envelope = due.envelope();
        if (!UNACKED.contains(due.state())) {
            store.forget(envelope.id(), DeliveryStore.Purpose.RELEASE);
            return;
        }
        deliverAgain(store.redeliver(envelope.id(), due.attempt(), clock.instant(), "claim taken back"),
                policies.of(envelope.to()));
    }

    private void deliverAgain(Optional<Envelope> again, DeliveryPolicy policy) {
        if (again.isEmpty()) {
            return;
        }
        metrics.redeliveries.increment();
        if (policy.webhook().isPresent()) {
            launch(again.get(), TAKEN_PER_NODE);
        } else {
            feeds.redeliver(again.get());
        }
    }

    /**
     * The gateway owning the target of a cross-gateway envelope did not confirm it in time:
     * publish it again, or after the last publication dead-letter it with a notice to its sender.
     * When no gateway owns the target (its owner and every fallback gone), it is dead-lettered now.
     */
    private void ownerSilent(DeliveryStore.Due due) {
        Envelope envelope = due.envelope();
        Optional<String> unowned = owners.unowned(envelope.to());
        if (unowned.isPresent()) {
            Instant now = clock.instant();
            if (federation.giveUp(envelope.id(), due.attempt(), unowned.get(), now, notices.deadLetter(envelope,
                    unowned.get(), due.attempt(), now))) {
                deadLettered(envelope, unowned.get());
                metrics.unowned.increment();
            }
            return;
        }
        if (due.attempt() >= ownerAck.publications()) {
            Instant now = clock.instant();
            String reason = "the gateway that owns " + envelope.to() + " did not confirm it after " + due.attempt()
                    + " publication(s)";
            if (federation.giveUp(envelope.id(), due.attempt(), reason, now, notices.deadLetter(envelope, reason,
                    due.attempt(), now))) {
                deadLettered(envelope, reason);
                metrics.unconfirmed.increment();
            }
            return;
        }
        if (federation.republish(envelope.id(), due.attempt() + 1)) {
            metrics.republished.increment();
            LOG.fine(() -> "published " + envelope.id() + " to " + envelope.to() + " again (publication "
                    + (due.attempt() + 1) + "): its owner has not confirmed it");
        }
    }

    /**
     * Starts a push unless one for the envelope is under way or its node has {@code takenAtMost}
     * taken up; whether it did. The schedule keeps a push not started.
     */
    private boolean launch(Envelope envelope, int takenAtMost) {
        if (closed || inFlight.contains(envelope.id())) {
            return false;
        }
        if (!taken.take(envelope.to(), envelope.contentChars(), takenAtMost)) {
            return false;
        }
        if (!inFlight.add(envelope.id())) {
            taken.release(envelope.to(), envelope.contentChars());
            return false;
        }
        if (!submit(() -> push(envelope))) {
            done(envelope); // shutting down: the schedule keeps the push for the next start
            return false;
        }
        return true;
    }

    /** Runs {@code work} on a virtual thread of its own; false once the dispatcher is shut down. */
    private boolean submit(Runnable work) {
        try {
            pushes.submit(work);
            return true;
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return false;
        }
    }

    private void done(Envelope envelope) {
        inFlight.remove(envelope.id());
        taken.release(envelope.to(), envelope.contentChars());
    }

    /**
     * Takes up {@code node}'s next due pushes from the store once half its room is free and
     * while pushes are left behind, so that each read starts many. Entries stay due while
     * their pushes are under way, so the read asks for those too and {@link #handle} passes
     * them by. A read that works off nothing stops here, the node still marked if the read
     * was full (its next finishing push, a new envelope or the scanner goes on): it must not
     * turn into a loop.
     */
    private void takeNext(NodeId node) {
        while (!closed && behind.contains(node) && taken.halfFree(node, HELD_PER_NODE) && takingNext.add(node)) {
            try {
                behind.remove(node); // before the read: a push left behind after it marks the node again
                DeliveryStore.DuePushes next = store.duePushes(node, clock.instant(), HELD_PER_NODE);
                int workedOff = 0;
                for (DeliveryStore.Due due : next.items()) {
                    workedOff += handle(due, HELD_PER_NODE) ? 1 : 0;
                }
                if (next.more()) {
                    behind.add(node); // more may wait than this read could ask for
                }
                if (workedOff == 0) {
                    return;
                }
            } catch (RuntimeException e) {
                if (!closed) {
                    LOG.log(Level.WARNING, "reading the next pushes of " + node + " failed; the scanner takes them", e);
                }
                return;
            } finally {
                takingNext.remove(node);
            }
        }
    }

    private void push(Envelope envelope) {
        NodePermits node = perNode.computeIfAbsent(envelope.to(), id -> new NodePermits());
        try {
            node.unrecorded().acquire();
            try {
                Optional<Attempt> attempt = callEndpoint(envelope, node.calls());
                if (attempt.isPresent()) {
                    record(attempt.get());
                } else {
                    store.forget(envelope.id(), DeliveryStore.Purpose.PUSH);
                }
            } finally {
                node.unrecorded().release();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // shutdown: the schedule keeps the push
        } catch (ParleyException | IllegalStateException e) {
            LOG.log(Level.WARNING, "push of " + envelope.id() + " could not be recorded; the schedule retries it", e);
        } finally {
            Finished finished = new Finished(envelope.id(), envelope.trace().attempt(), System.nanoTime());
            justFinished.put(envelope.id(), finished);
            finishedInOrder.add(finished);
            done(envelope);
        }
        takeNext(envelope.to());
    }

    /** A push's call to its node's webhook, under the node's delivery policy then. */
    private record Attempt(Envelope envelope, DeliveryPolicy policy, Courier.Outcome outcome) {
    }

    /**
     * Calls {@code envelope}'s node's webhook within the node's {@code calls} and the total's
     * permits, which bound the requests at endpoints; empty when the node has no webhook (any
     * more). The outcome is recorded after the permits are released: held through the store's
     * fsync they kept a busy node's next pushes waiting for other pushes' records (BENCHMARKS.md,
     * "Issue 15, stop 64"). The envelope stays in flight until recorded, so it is not pushed twice.
     */
    private Optional<Attempt> callEndpoint(Envelope envelope, Semaphore calls) throws InterruptedException {
        calls.acquire();
        try {
            total.acquire();
            try {
                DeliveryPolicy policy = policies.of(envelope.to());
                if (policy.webhook().isEmpty()) {
                    return Optional.empty();
                }
                Instant started = clock.instant();
                Courier.Outcome outcome = courier.push(policy.webhook().get(), envelope);
                metrics.pushLatency(started, clock.instant());
                return Optional.of(new Attempt(envelope, policy, outcome));
            } finally {
                total.release();
            }
        } finally {
            calls.release();
        }
    }

    private void record(Attempt pushed) {
        Envelope envelope = pushed.envelope();
        DeliveryPolicy policy = pushed.policy();
        int attempt = envelope.trace().attempt();
        switch (pushed.outcome()) {
            case Courier.Outcome.Delivered d -> {
                recordDelivered(new DeliveryStore.Pushed(envelope, policy.redeliverAfter()));
                metrics.pushes.increment();
                webhookDelivered(envelope.to());
            }
            case Courier.Outcome.Refused refused -> {
                webhookFailed(envelope, attempt, refused.why());
                if (policy.retry().exhaustedAfter(attempt)) {
                    deadLetter(envelope, "webhook failed " + attempt + " attempt(s); last: " + refused.why(), attempt);
                } else {
                    long delay = policy.retry().delayAfter(attempt, ThreadLocalRandom.current());
                    Instant now = clock.instant();
                    store.pushFailed(envelope, new DeliveryEvent.PushFailed(attempt, refused.why(), delay), now,
                            now.plusMillis(delay));
                    metrics.retries.increment();
                }
            }
        }
    }

    /**
     * Records a delivered push and returns once it is durable. Whoever takes the turn writes
     * every push waiting, so the pushes that finish while one write commits share the next
     * writer job (as a stream's batch of frames does) instead of one job each.
     */
    private void recordDelivered(DeliveryStore.Pushed pushed) {
        Unrecorded mine = new Unrecorded(pushed, new CompletableFuture<>());
        unrecorded.add(mine);
        recording.lock();
        try {
            if (!mine.recorded().isDone()) {
                List<Unrecorded> batch = new ArrayList<>();
                for (Unrecorded next = unrecorded.poll(); next != null; next = unrecorded.poll()) {
                    batch.add(next);
                }
                try {
                    store.pushed(batch.stream().map(Unrecorded::pushed).toList(), clock.instant());
                    batch.forEach(u -> u.recorded().complete(null));
                } catch (RuntimeException e) {
                    batch.forEach(u -> u.recorded().completeExceptionally(e));
                }
            }
        } finally {
            recording.unlock();
        }
        try {
            mine.recorded().join();
        } catch (CompletionException e) {
            throw (RuntimeException) e.getCause(); // what the store said, as if this push had written alone
        }
    }

    /**
     * A failing webhook is logged when its run of failures starts and when it ends, not per
     * envelope: a dead endpoint would otherwise log every attempt of every envelope. Each
     * attempt is at FINE.
     */
    private void webhookFailed(Envelope envelope, int attempt, String why) {
        LOG.fine(() -> "push of " + envelope.id() + " to " + envelope.to() + " failed (attempt " + attempt + "): "
                + why);
        if (failingWebhooks.merge(envelope.to(), new Failing(clock.instant(), 1, why), Failing::then).attempts() == 1) {
            LOG.warning("the webhook of " + envelope.to() + " fails: " + why + "; its pushes are retried with backoff");
        }
    }

    private void webhookDelivered(NodeId node) {
        Failing failed = failingWebhooks.remove(node);
        if (failed != null) {
            LOG.info("the webhook of " + node + " delivers again, after " + failed.attempts() + " failed attempt(s)");
        }
    }

    private void deadLetter(Envelope envelope, String reason, int attempts) {
        Instant now = clock.instant();
        store.deadLetter(envelope.id(), reason, attempts, now, notices.deadLetter(envelope, reason, attempts, now));
        deadLettered(envelope, reason);
    }

    private void deadLettered(Envelope envelope, String reason) {
        metrics.deadLetters.increment();
        LOG.warning("dead-lettered " + envelope.id() + " to " + envelope.to() + ": " + reason);
    }

    /** Stops scanning and pushing; unfinished work stays in the schedule for the next start. */
    @Override
    public void close() {
        closed = true;
        scanner.interrupt();
        pushes.shutdownNow();
        try {
            scanner.join(2_000);
            pushes.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        courier.close();
    }
}
