package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.core.Webhook;
import dev.parley.core.WebhookSignature;
import dev.parley.server.wire.Json;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Carries one envelope to one webhook: a signed POST, bounded by connect and response timeouts.
 *
 * <p>Each push runs on its own (virtual) thread and blocks on a {@link PushConnection} kept
 * alive per endpoint. The push timeout covers the whole push (connect, write, answer) as a
 * deadline: when it passes, the push's connection is closed under it.
 */
public final class Courier implements AutoCloseable {
    /** Idle connections kept per endpoint: as many as pushes may run at once, since many nodes may share one endpoint. */
    private static final int KEPT_PER_ENDPOINT = Dispatcher.TOTAL;
    /** An idle connection older than this is closed rather than used (endpoints close theirs after a while too). */
    private static final long KEEP_IDLE_NANOS = TimeUnit.SECONDS.toNanos(30);

    /** What a push attempt came to. */
    sealed interface Outcome {
        record Delivered(int status) implements Outcome {
        }

        record Refused(String why) implements Outcome {
        }
    }

    /** How many webhooks' signers are kept: past that they are all made anew (secrets change rarely). */
    private static final int KEPT_SIGNERS = 4096;

    private final Duration timeout;
    private final Map<String, WebhookSignature.Signer> signers = new ConcurrentHashMap<>();
    private final List<PushForm> forms = new CopyOnWriteArrayList<>();
    private final ConcurrentHashMap<PushConnection.Endpoint, BlockingDeque<PushConnection>> idle = new ConcurrentHashMap<>();
    /** Fires the deadlines of pushes, and now and then closes connections idle too long. */
    private final ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1,
            Thread.ofPlatform().name("parley-push-deadlines").daemon(true).factory());

    public Courier(Duration timeout) {
        this.timeout = timeout;
        timers.setRemoveOnCancelPolicy(true); // a push that finishes in time takes its deadline out of the queue
        timers.scheduleWithFixedDelay(this::closeIdle, 5, 5, TimeUnit.SECONDS);
    }

    /** Adds a form for the envelopes it claims (pushes whose body is not the envelope itself). */
    void shape(PushForm form) {
        forms.add(form);
    }

    Outcome push(Webhook webhook, Envelope envelope) throws InterruptedException {
        PushForm.Outbound shaped = shaped(envelope);
        byte[] body = shaped == null ? Json.envelope(envelope) : shaped.body();
        List<String[]> headers = new ArrayList<>(6);
        headers.add(new String[] {"User-Agent", "parley-hub"});
        headers.add(new String[] {"Parley-Event-Id", envelope.id()});
        headers.add(new String[] {"Parley-Attempt", Integer.toString(envelope.trace().attempt())});
        headers.add(new String[] {WebhookSignature.HEADER, signer(webhook.secret()).sign(body)});
        if (shaped != null) {
            shaped.headers().forEach((name, value) -> headers.add(new String[] {name, value}));
        }
        URI url = webhook.url();
        byte[] head = PushConnection.head(url, shaped == null ? "application/json" : shaped.contentType(), body.length,
                headers);

        Deadline deadline = new Deadline(System.nanoTime() + timeout.toNanos());
        ScheduledFuture<?> alarm = timers.schedule(deadline, timeout.toNanos(), TimeUnit.NANOSECONDS);
        PushConnection.Endpoint endpoint = PushConnection.Endpoint.of(url);
        try {
            int status = deliver(deadline, endpoint, head, body);
            return status / 100 == 2 ? new Outcome.Delivered(status) : new Outcome.Refused("HTTP " + status);
        } catch (IOException e) {
            if (deadline.expired()) {
                return new Outcome.Refused(noAnswer());
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException("push of " + envelope.id() + " stopped: the hub is shutting down");
            }
            if (e instanceof SocketTimeoutException) {
                return new Outcome.Refused(noAnswer()); // the connect's own timeout, just before the deadline
            }
            if (e instanceof ConnectException || e instanceof NoRouteToHostException || e instanceof UnknownHostException) {
                return new Outcome.Refused("cannot connect to " + url.getHost() + " (refused or unreachable)");
            }
            return new Outcome.Refused("connection failed" + (e.getMessage() == null ? "" : ": " + e.getMessage()));
        } finally {
            PushConnection used = deadline.connection;
            if (deadline.finish()) {
                alarm.cancel(false);
                if (used != null && used.reusable()) {
                    keep(endpoint, used);
                } else if (used != null) {
                    used.abort();
                }
            }
        }
    }

    /** The first form's push for {@code envelope}, or null: the body is the envelope itself. */
    private PushForm.Outbound shaped(Envelope envelope) {
        for (PushForm form : forms) {
            Optional<PushForm.Outbound> out = form.of(envelope);
            if (out.isPresent()) {
                return out.get();
            }
        }
        return null;
    }

    /**
     * Posts on a kept connection, or a new one. A kept connection that fails before any of the
     * answer came was most likely closed by the endpoint while idle: the push goes again on a new one.
     */
    private int deliver(Deadline deadline, PushConnection.Endpoint endpoint, byte[] head, byte[] body)
            throws IOException {
        for (PushConnection kept = idle(endpoint); kept != null; kept = idle(endpoint)) {
            try {
                if (kept.stale()) {
                    kept.abort();
                    continue;
                }
                return deadline.use(kept).post(head, body);
            } catch (IOException e) {
                kept.abort();
                // only a connection that failed at once, before any answer and before the deadline,
                // is taken for one the endpoint closed while idle (a timeout is not that)
                if (kept.answerStarted() || e instanceof SocketTimeoutException || deadline.expired()
                        || Thread.currentThread().isInterrupted()) {
                    throw e;
                }
            }
        }
        long left = TimeUnit.NANOSECONDS.toMillis(deadline.atNanos - System.nanoTime());
        if (left <= 0) {
            throw new IOException(noAnswer());
        }
        PushConnection fresh = PushConnection.open(endpoint, (int) Math.min(Integer.MAX_VALUE, left), deadline::opening);
        try {
            return deadline.use(fresh).post(head, body);
        } catch (IOException | RuntimeException e) {
            fresh.abort();
            throw e;
        }
    }

    private WebhookSignature.Signer signer(String secret) {
        if (signers.size() > KEPT_SIGNERS) {
            signers.clear();
        }
        return signers.computeIfAbsent(secret, WebhookSignature::signer);
    }

    /** The most recently used idle connection to {@code endpoint} that has not idled too long, or null. */
    private PushConnection idle(PushConnection.Endpoint endpoint) {
        BlockingDeque<PushConnection> kept = idle.get(endpoint);
        if (kept == null) {
            return null;
        }
        long now = System.nanoTime();
        for (PushConnection c = kept.pollFirst(); c != null; c = kept.pollFirst()) {
            if (now - c.idleSinceNanos() < KEEP_IDLE_NANOS) {
                return c;
            }
            c.abort();
        }
        return null;
    }

    /** Keeps {@code connection} for the next push to {@code endpoint}, in the same step as {@link #closeIdle}'s removal of an empty deque. */
    private void keep(PushConnection.Endpoint endpoint, PushConnection connection) {
        connection.idleSince(System.nanoTime());
        idle.compute(endpoint, (e, kept) -> {
            BlockingDeque<PushConnection> deque = kept != null ? kept : new LinkedBlockingDeque<>(KEPT_PER_ENDPOINT);
            if (!deque.offerFirst(connection)) {
                connection.abort();
            }
            return deque;
        });
    }

    /**
     * Closes connections idle too long (the oldest are at the tail of each endpoint's deque),
     * and forgets endpoints with none left: a hub that pushed to many endpoints once keeps no
     * entry for each.
     */
    private void closeIdle() {
        long now = System.nanoTime();
        for (PushConnection.Endpoint endpoint : idle.keySet()) {
            BlockingDeque<PushConnection> kept = idle.get(endpoint);
            if (kept == null) {
                continue;
            }
            for (PushConnection c = kept.peekLast(); c != null && now - c.idleSinceNanos() >= KEEP_IDLE_NANOS;
                 c = kept.peekLast()) {
                if (kept.removeLastOccurrence(c)) {
                    c.abort();
                }
            }
            idle.computeIfPresent(endpoint, (e, deque) -> deque.isEmpty() ? null : deque);
        }
    }

    /** How many endpoints have a deque of idle connections (for tests). */
    int endpointsKept() {
        return idle.size();
    }

    private String noAnswer() {
        return "no answer within " + timeout.toMillis() + " ms";
    }

    /**
     * A push's deadline: when it fires first, it closes the push's connection; when the push
     * finishes first, the connection is the push's to keep or close.
     */
    private static final class Deadline implements Runnable {
        final long atNanos;
        private final AtomicBoolean over = new AtomicBoolean();
        private volatile boolean expired;
        volatile PushConnection connection;
        /** The socket of a connection being opened (connect, TLS handshake): closed when the deadline fires. */
        private volatile Socket opening;

        Deadline(long atNanos) {
            this.atNanos = atNanos;
        }

        @Override
        public void run() {
            if (over.compareAndSet(false, true)) {
                expired = true;
                PushConnection c = connection;
                if (c != null) {
                    c.abort();
                }
                closeQuietly(opening);
            }
        }

        /** Takes the socket of a connection being opened; if the deadline has passed meanwhile, closes it. */
        void opening(Socket socket) {
            opening = socket;
            if (expired) {
                closeQuietly(socket);
            }
        }

        private static void closeQuietly(Socket socket) {
            if (socket != null) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing is all the deadline does; the push sees its socket closed
                }
            }
        }

        /** Takes {@code c} for this push; if the deadline has passed meanwhile, closes it (the post then fails). */
        PushConnection use(PushConnection c) {
            connection = c;
            if (expired) {
                c.abort();
            }
            return c;
        }

        boolean expired() {
            return expired;
        }

        /** Ends the race with the alarm: true when the push finished first (its connection is its own). */
        boolean finish() {
            return over.compareAndSet(false, true);
        }
    }

    @Override
    public void close() {
        timers.shutdownNow();
        idle.values().forEach(kept -> kept.forEach(PushConnection::abort));
        idle.clear();
    }
}
