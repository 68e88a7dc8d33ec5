package dev.parley.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.mcp.InboxSource;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * The node's inbox stream for the channel bridge: {@code GET /v1/inbox/stream?replay=unacked},
 * first every envelope not yet acked or replied to — also those an earlier session was given
 * and never acked, so a session that died loses nothing — then live ones and redeliveries. A
 * lost connection is retried with backoff, resuming after the last seq seen
 * ({@code Last-Event-ID}, which the hub prefers to the replay), so an envelope is neither
 * missed nor pushed twice because of a reconnect.
 */
final class InboxFollower implements InboxSource {
    private static final Logger LOG = Logger.getLogger(InboxFollower.class.getName());
    private static final Duration FIRST_RETRY = Duration.ofMillis(200);
    private static final Duration LAST_RETRY = Duration.ofSeconds(5);
    private static final String STREAM = "/v1/inbox/stream?replay=unacked";

    private final HubClient client;
    private final Duration idle;

    InboxFollower(HubClient client, Duration idle) {
        this.client = client;
        this.idle = idle;
    }

    @Override
    public void follow(Consumer<JsonNode> envelopes) throws InterruptedException {
        Long cursor = null;
        int failures = 0;
        while (!Thread.currentThread().isInterrupted()) {
            String lost;
            try (EventStream stream = client.stream(STREAM, cursor)) {
                if (failures > 0) {
                    LOG.info("inbox stream back" + (cursor == null ? "" : " after seq " + cursor));
                }
                failures = 0;
                for (EventStream.Event event; (event = stream.next(idle)) != null; ) {
                    JsonNode envelope;
                    try {
                        envelope = JsonTrees.read(event.data());
                    } catch (JsonProcessingException e) {
                        LOG.warning("skipped a streamed envelope that is not JSON: " + e.getOriginalMessage());
                        continue;
                    }
                    if (event.id() != null) { // a redelivery has no id and leaves the cursor alone
                        long seq = Long.parseLong(event.id().strip());
                        if (cursor != null && seq <= cursor) {
                            continue;
                        }
                        cursor = seq;
                    }
                    envelopes.accept(envelope);
                }
                lost = "the hub ended the stream";
            } catch (HubException e) {
                lost = e.code() + ": " + e.getMessage();
            } catch (IOException | NumberFormatException e) {
                lost = String.valueOf(e.getMessage());
            }
            Duration wait = backoff(failures++);
            LOG.warning("inbox stream lost (" + lost + "); reconnecting in " + wait.toMillis() + " ms");
            Thread.sleep(wait);
        }
        throw new InterruptedException();
    }

    private static Duration backoff(int failures) {
        long ceiling = Math.min(LAST_RETRY.toMillis(), FIRST_RETRY.toMillis() << Math.min(failures, 10));
        return Duration.ofMillis(ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1));
    }
}
