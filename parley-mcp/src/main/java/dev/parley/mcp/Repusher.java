package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Pushes an envelope into the session again while it stays open. Claude Code does not
 * confirm that a channel notification reached the model, so every pushed envelope is kept
 * here until the hub says it is settled (replied, processed, failed or dead-lettered — by
 * this session or anyone holding the node's token). Every {@code after} the hub is asked
 * for its state, and an open one is pushed again, at most {@code limit} times. The hub's
 * state is the truth; the bridge's own bookkeeping only saves requests.
 *
 * <p>This lives in the bridge rather than in the node's {@code redeliverAfterMs}: setting
 * that would change the node's delivery policy for every reader (and end in dead letters
 * after the retry limit), while a session that merely has not acked yet is a matter of
 * this one connection.
 */
public final class Repusher implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Repusher.class.getName());

    private record Open(JsonNode envelope, Instant lastPush, int pushes) {
    }

    private final HubPort hub;
    private final Duration after;
    private final int limit;
    private final Consumer<JsonNode> push;
    private final InstantSource clock;
    private final Map<String, Open> open = new ConcurrentHashMap<>();
    private final Thread ticker;

    public Repusher(HubPort hub, Duration after, int limit, Consumer<JsonNode> push, InstantSource clock) {
        if (after.isNegative() || after.isZero()) {
            throw new IllegalArgumentException("the repush interval must be positive");
        }
        this.hub = hub;
        this.after = after;
        this.limit = limit;
        this.push = push;
        this.clock = clock;
        this.ticker = Thread.ofVirtual().name("parley-repush").unstarted(this::run);
    }

    public void start() {
        ticker.start();
    }

    /** {@code envelope} was just pushed (first time or again by the hub): watch it. */
    public void pushed(JsonNode envelope) {
        String id = envelope.path("id").asText("");
        if (id.isEmpty()) {
            return;
        }
        open.merge(id, new Open(envelope, clock.instant(), 1),
                (was, now) -> new Open(now.envelope(), now.lastPush(), was.pushes()));
    }

    /** How many envelopes are watched now. */
    public int watching() {
        return open.size();
    }

    private void run() {
        long tick = Math.max(50, Math.min(1_000, after.toMillis() / 4));
        try {
            while (!Thread.currentThread().isInterrupted()) {
                Thread.sleep(tick);
                sweep();
            }
        } catch (InterruptedException e) {
            // closed
        }
    }

    /** One pass: settled envelopes are forgotten, open ones due are pushed again. */
    void sweep() {
        Instant now = clock.instant();
        for (Iterator<Map.Entry<String, Open>> it = open.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Open> entry = it.next();
            Open watched = entry.getValue();
            if (now.isBefore(watched.lastPush().plus(after))) {
                continue;
            }
            String state;
            try {
                state = hub.message(entry.getKey()).path("state").asText("");
            } catch (HubRefusal e) {
                if (e.status() == 404 || e.status() == 403) {
                    it.remove(); // gone, or no longer ours to read
                } else {
                    LOG.log(Level.FINE, "cannot read the state of " + entry.getKey() + ": " + e.getMessage());
                }
                continue;
            }
            if (ChannelTools.SETTLED.contains(state)) {
                it.remove();
            } else if (watched.pushes() >= limit) {
                it.remove();
                LOG.info("stopped pushing " + entry.getKey() + " after " + watched.pushes()
                        + " pushes without an ack; the inbox tool still lists it");
            } else {
                push.accept(watched.envelope());
                entry.setValue(new Open(watched.envelope(), clock.instant(), watched.pushes() + 1));
            }
        }
    }

    @Override
    public void close() {
        ticker.interrupt();
    }
}
