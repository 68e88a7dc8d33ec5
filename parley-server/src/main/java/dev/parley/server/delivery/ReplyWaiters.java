package dev.parley.server.delivery;

import dev.parley.core.DeliveryStore;
import dev.parley.core.Envelope;
import dev.parley.core.Notifier;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Senders holding their HTTP call open ({@code ?wait=}) until the reply to their request is committed. */
public final class ReplyWaiters implements Notifier {
    private final Map<String, CompletableFuture<Envelope>> waiting = new ConcurrentHashMap<>();
    private final DeliveryStore store;

    public ReplyWaiters(DeliveryStore store) {
        this.store = store;
    }

    @Override
    public void committed(Envelope envelope) {
        if (envelope.kind().equals("reply") && envelope.corrId().isPresent()) {
            CompletableFuture<Envelope> waiter = waiting.get(envelope.corrId().get());
            if (waiter != null) {
                waiter.complete(envelope);
            }
        }
    }

    /** The reply to {@code requestId}, if one is committed within {@code wait}. */
    public Optional<Envelope> await(String requestId, Duration wait) throws InterruptedException {
        CompletableFuture<Envelope> waiter = waiting.computeIfAbsent(requestId, id -> new CompletableFuture<>());
        try {
            Optional<Envelope> early = store.replyTo(requestId); // a reply committed before we started waiting
            if (early.isPresent()) {
                return early;
            }
            return Optional.of(waiter.get(wait.toMillis(), TimeUnit.MILLISECONDS));
        } catch (TimeoutException e) {
            return Optional.empty();
        } catch (ExecutionException e) {
            throw new IllegalStateException("reply waiters are only ever completed normally", e);
        } finally {
            waiting.remove(requestId, waiter);
        }
    }
}
