package dev.parley.server.push;

import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.server.it.HubFixture;
import dev.parley.server.it.LogCapture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A webhook that fails is visible in the log at the default level, once per run of
 * failures rather than once per envelope or attempt, and its recovery is logged too.
 */
class PushFailureLogTest {
    private static final int ENVELOPES = 10;

    @TempDir
    Path dir;

    @Test
    void aFailingWebhookIsLoggedWhenItStartsFailingAndWhenItDeliversAgain() {
        AtomicBoolean failing = new AtomicBoolean(true);
        try (HubFixture hub = HubFixture.start(dir);
             WebhookReceiver receiver = new WebhookReceiver(n -> failing.get() ? 503 : 204);
             LogCapture log = LogCapture.of("dev.parley.server.delivery.Dispatcher")) {
            String lead = uid("lead");
            String leadToken = hub.createNode(lead, null);
            String worker = uid("hook-log");
            hub.createNode(worker, lead);
            var put = hub.request("PUT", "/v1/nodes/" + worker + "/delivery", hub.admin(), obj(
                    "webhook", obj("url", receiver.url(), "secret", WebhookReceiver.SECRET),
                    "retry", obj("maxAttempts", 20, "baseMs", 50, "capMs", 200)).toString()
                    .getBytes(StandardCharsets.UTF_8), Map.of());
            assertEquals(200, put.status(), put::toString);
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < ENVELOPES; i++) {
                ids.add(hub.sendOk(leadToken, worker, "push " + i).text("id"));
            }

            // Every envelope fails at least twice while the endpoint is down.
            await().atMost(Duration.ofSeconds(30)).until(() -> log.messages(Level.FINE, worker).size()
                    >= 2 * ENVELOPES);
            assertEquals(1, log.messages(Level.WARNING, "the webhook of " + worker + " fails").size(),
                    () -> "one warning for the whole run of failures: " + log.records(worker));
            assertTrue(log.messages(Level.FINE, worker).getFirst().contains("HTTP 503"));

            failing.set(false);
            await().atMost(Duration.ofSeconds(30)).until(() -> ids.stream()
                    .allMatch(id -> "delivered".equals(hub.status(leadToken, id).text("state"))));
            List<LogRecord> notices = log.records(worker).stream().filter(r -> r.getLevel().intValue()
                    >= Level.INFO.intValue()).toList();
            LogRecord last = notices.getLast();
            assertEquals(Level.INFO, last.getLevel(), () -> "the last notice says it delivers again: " + notices);
            assertTrue(last.getMessage().contains("the webhook of " + worker + " delivers again"), last.getMessage());
        }
    }
}
