package dev.parley.server.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.RetryPolicy;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.LogCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntUnaryOperator;
import java.util.logging.Level;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WebhookDeliveryTest {
    private static final Pattern NEXT = Pattern.compile("next attempt in (\\d+) ms");
    private static final Duration PATIENCE = Duration.ofSeconds(20);
    /** The dispatcher's bound on pushes in flight to one node. */
    private static final int PUSHES_PER_NODE = 8;
    /** Pushes of one node sent and not yet recorded (Dispatcher.UNRECORDED_PER_NODE). */
    private static final int UNRECORDED_PER_NODE = 32;
    /** Pushes of new envelopes a node may have under way, running or waiting (Dispatcher.HELD_PER_NODE). */
    private static final int HELD_PER_NODE = 256;
    /** Characters of text and data one node's pushes taken up may hold (Dispatcher.HELD_CHARS_PER_NODE). */
    private static final int HELD_CHARS_PER_NODE = 4 << 20;
    /** How many due entries the dispatcher's scanner reads at a time. */
    private static final int SCAN_PAGE = 256;

    @TempDir
    Path dir;

    /** A lead and a worker child reached by webhook; returns {leadToken, workerId}. */
    private static String[] leadAndWebhookWorker(HubFixture hub, String url, int maxAttempts, long baseMs, long capMs) {
        String lead = uid("lead");
        String leadToken = hub.createNode(lead, null);
        String worker = uid("hooked");
        hub.createNode(worker, lead);
        var put = hub.request("PUT", "/v1/nodes/" + worker + "/delivery", hub.admin(), HubFixture.JSON.valueToTree(obj(
                "webhook", obj("url", url, "secret", WebhookReceiver.SECRET),
                "retry", obj("maxAttempts", maxAttempts, "baseMs", baseMs, "capMs", capMs))).toString().getBytes(), java.util.Map.of());
        assertEquals(200, put.status(), put::toString);
        assertEquals("********", put.get("webhook").get("secret").asText());
        return new String[]{leadToken, worker};
    }

    /** An endpoint's answer: 204, once {@code open} is counted down. */
    private static IntUnaryOperator answersOnceOpen(CountDownLatch open) {
        return n -> {
            try {
                open.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return 204;
        };
    }

    /** Every one of {@code ids} is pushed to {@code gated} exactly once, and delivered, with no push left under way. */
    private static void assertPushedOnceEach(HubFixture hub, WebhookReceiver gated, String senderToken, Set<String> ids) {
        await().atMost(PATIENCE).until(() -> hub.metric("parley_pushes_in_flight") == 0
                && gated.answered() >= ids.size());
        for (String id : ids) {
            assertEquals("delivered", hub.status(senderToken, id).text("state"), id);
        }
        List<String> pushed = gated.hits().stream().map(WebhookReceiver.Hit::eventId).toList();
        assertEquals(ids, Set.copyOf(pushed));
        assertEquals(ids.size(), pushed.size(), "each envelope pushed once");
    }

    @Test
    void failingThenSucceedingEndpointGetsSignedAttemptsWithJitterWithinBounds() {
        try (HubFixture hub = HubFixture.start(dir); WebhookReceiver receiver = new WebhookReceiver(n -> n <= 3 ? 500 : 204)) {
            String[] pair = leadAndWebhookWorker(hub, receiver.url(), 6, 100, 400);
            String id = hub.sendOk(pair[0], pair[1], "build it").text("id");

            await().atMost(PATIENCE).until(() -> "delivered".equals(hub.status(pair[0], id).text("state")));
            List<WebhookReceiver.Hit> hits = receiver.hits();
            assertEquals(4, hits.size(), hits::toString);
            for (int i = 0; i < hits.size(); i++) {
                assertEquals(id, hits.get(i).eventId());
                assertEquals(i + 1, hits.get(i).attempt());
                assertTrue(hits.get(i).signed(), "bad signature on attempt " + (i + 1));
                assertTrue(hits.get(i).body().contains("\"attempt\":" + (i + 1)), hits.get(i).body());
            }
            RetryPolicy policy = new RetryPolicy(6, 100, 400);
            List<JsonNode> timeline = new java.util.ArrayList<>();
            hub.status(pair[0], id).get("timeline").forEach(timeline::add);
            List<JsonNode> retries = timeline.stream().filter(t -> t.get("state").asText().equals("retry_pending")).toList();
            assertEquals(3, retries.size(), timeline::toString);
            for (int attempt = 1; attempt <= 3; attempt++) {
                Matcher next = NEXT.matcher(retries.get(attempt - 1).get("detail").asText());
                assertTrue(next.find(), retries.get(attempt - 1).toString());
                long delay = Long.parseLong(next.group(1));
                assertTrue(delay >= 0 && delay <= policy.ceilingAfter(attempt),
                        "attempt " + attempt + " delay " + delay + " beyond " + policy.ceilingAfter(attempt));
                long gapMs = (hits.get(attempt).atNanos() - hits.get(attempt - 1).atNanos()) / 1_000_000;
                assertTrue(gapMs + 50 >= delay, "attempt " + (attempt + 1) + " came " + gapMs + " ms after, before its " + delay + " ms");
            }
            assertTrue(hub.metric("parley_push_retries_total") >= 3);
        }
    }

    @Test
    void anEndpointThatNeverSucceedsDeadLettersNotifiesTheSenderAndCanBeRedriven() {
        boolean[] healthy = {false};
        try (HubFixture hub = HubFixture.start(dir);
             WebhookReceiver receiver = new WebhookReceiver(n -> healthy[0] ? 200 : 503)) {
            String[] pair = leadAndWebhookWorker(hub, receiver.url(), 3, 20, 50);
            String id = hub.sendOk(pair[0], pair[1], "doomed").text("id");

            await().atMost(PATIENCE).until(() -> "dead_lettered".equals(hub.status(pair[0], id).text("state")));
            assertEquals(3, receiver.hits().size());
            var notice = await().atMost(PATIENCE).until(() -> hub.inbox(pair[0]).stream()
                    .filter(e -> e.get("kind").asText().equals("dead_letter")).findFirst(), java.util.Optional::isPresent).get();
            assertEquals(id, notice.get("corrId").asText());
            assertEquals("parley", notice.get("from").asText());

            var list = hub.get(hub.admin(), "/v1/dead-letters?node=" + pair[1]);
            assertEquals(1, list.items().size(), list::toString);
            assertEquals(3, list.items().getFirst().get("attempts").asInt());
            assertEquals(200, hub.get(hub.admin(), "/v1/dead-letters/" + id).status());
            assertError(hub.get(pair[0], "/v1/dead-letters"), 403, "forbidden");

            healthy[0] = true;
            var redrive = hub.post(hub.admin(), "/v1/dead-letters/" + id + "/redrive", obj());
            assertEquals(202, redrive.status(), redrive::toString);
            await().atMost(PATIENCE).until(() -> "delivered".equals(hub.status(pair[0], id).text("state")));
            assertEquals(1, receiver.hits().getLast().attempt(), "a redrive starts a fresh attempt cycle");
            assertEquals(id, receiver.hits().getLast().eventId());
            assertError(hub.get(hub.admin(), "/v1/dead-letters/" + id), 404, "dead_letter_not_found");
            assertError(hub.post(hub.admin(), "/v1/dead-letters/" + id + "/redrive", obj()), 404, "dead_letter_not_found");
        }
    }

    /**
     * A hanging endpoint holds its own node's push permits and nothing else. Its pushes are
     * held (the push timeout is far beyond the test) while another node's pushes all go
     * through: no time is measured, the order says it all.
     */
    @Test
    void aHangingEndpointDoesNotDelayOtherNodes() {
        try (HubFixture hub = HubFixture.start(dir, c -> c.withPushTimeout(Duration.ofMinutes(10)));
             WebhookReceiver hanging = new WebhookReceiver(n -> WebhookReceiver.HANG);
             WebhookReceiver healthy = new WebhookReceiver(n -> 200)) {
            String[] stuck = leadAndWebhookWorker(hub, hanging.url(), 5, 50, 100);
            String[] fine = leadAndWebhookWorker(hub, healthy.url(), 5, 50, 100);
            for (int i = 0; i < 40; i++) {
                hub.sendOk(stuck[0], stuck[1], "into the void " + i);
            }
            await().atMost(PATIENCE).until(() -> hanging.hits().size() >= PUSHES_PER_NODE);
            for (int i = 0; i < 20; i++) {
                hub.sendOk(fine[0], fine[1], "hello " + i);
            }
            await().atMost(PATIENCE).until(() -> healthy.hits().size() == 20);
            assertEquals(0, hanging.answered(), "the hanging endpoint still holds every push it got");
            assertEquals(PUSHES_PER_NODE, hanging.hits().size(),
                    "in flight to one node is bounded: the other 32 wait for a permit");
        }
    }

    /**
     * A node's eight permits bound the requests at its endpoint, not the recording after them:
     * once its endpoint has answered eight pushes that then wait for the store (a test
     * connection holds the database's write lock), its next pushes go out without waiting for
     * their records, up to 32 sent and unrecorded, and no more while the store stays held (what a
     * crash then would push again); released, every envelope is delivered once.
     */
    @Test
    void whileTheStoreIsHeldANodesPushesGoOnUpTo32Unrecorded() throws Exception {
        CountDownLatch open = new CountDownLatch(1);
        try (HubFixture hub = HubFixture.start(dir, c -> HubFixture.unthrottled(c).withPushTimeout(Duration.ofMinutes(10)));
             WebhookReceiver gated = new WebhookReceiver(answersOnceOpen(open))) {
            String[] pair = leadAndWebhookWorker(hub, gated.url(), 5, 50, 100);
            Set<String> ids = new HashSet<>();
            for (int i = 0; i < UNRECORDED_PER_NODE + 8; i++) {
                ids.add(hub.sendOk(pair[0], pair[1], "push " + i).text("id"));
            }
            await().atMost(PATIENCE).until(() -> gated.hits().size() == PUSHES_PER_NODE);
            try (var db = java.sql.DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("parley.db"));
                 var lock = db.createStatement()) {
                lock.execute("PRAGMA busy_timeout = 10000");
                lock.execute("BEGIN IMMEDIATE"); // the hub's writer now waits (up to its own 10 s busy timeout)
                open.countDown();
                // within the writer's 10 s: past the eight, then 32 for three passes of the scanner
                await().atMost(Duration.ofSeconds(6)).during(Duration.ofMillis(600))
                        .until(() -> gated.hits().size() == UNRECORDED_PER_NODE);
                assertTrue(ids.stream().noneMatch(id -> "delivered".equals(hub.status(pair[0], id).text("state"))),
                        "no push is recorded while the store is held");
                lock.execute("ROLLBACK");
            }
            assertPushedOnceEach(hub, gated, pair[0], ids);
        }
    }

    /**
     * The schedule's scanner reads due pushes a page at a time, oldest first. A hanging endpoint
     * with more pushes waiting than a page holds (all in flight, none finishing) must not keep
     * the scanner from ever reaching a later retry of another node.
     */
    @Test
    void aHangingEndpointsBacklogDoesNotHoldBackAnotherNodesRetry() {
        // hundreds of sends from one node, as fast as the machine allows: not a test of the rate limit
        try (HubFixture hub = HubFixture.start(dir,
                c -> HubFixture.unthrottled(c.withPushTimeout(Duration.ofMinutes(10))));
             WebhookReceiver hanging = new WebhookReceiver(n -> WebhookReceiver.HANG);
             WebhookReceiver flaky = new WebhookReceiver(n -> n == 1 ? 503 : 200)) {
            String[] stuck = leadAndWebhookWorker(hub, hanging.url(), 5, 50, 100);
            String[] retried = leadAndWebhookWorker(hub, flaky.url(), 5, 50, 100);
            for (int i = 0; i < 2 * SCAN_PAGE + 44; i++) {
                hub.sendOk(stuck[0], stuck[1], "into the void " + i);
            }
            await().atMost(PATIENCE).until(() -> hanging.hits().size() >= PUSHES_PER_NODE);
            String id = hub.sendOk(retried[0], retried[1], "second time lucky").text("id");
            await().atMost(PATIENCE).until(() -> "delivered".equals(hub.status(retried[0], id).text("state")));
            assertEquals(List.of(1, 2), flaky.hits().stream().map(WebhookReceiver.Hit::attempt).toList());
            assertEquals(0, hanging.answered(), "the hanging endpoint still holds every push it got");
        }
    }

    /**
     * A due entry whose envelope this build cannot read (its route damaged in the file) is said
     * once and passed by: the scanner neither fails every pass on it nor stops there, so a
     * retry due after it still goes out.
     */
    @Test
    void anUnreadableEntryInTheScheduleIsPassedByOnce() throws Exception {
        try (HubFixture hub = HubFixture.start(dir);
             WebhookReceiver flaky = new WebhookReceiver(n -> n == 1 ? 503 : 200);
             LogCapture store = LogCapture.of("dev.parley.store.SqliteDeliveries");
             LogCapture dispatcher = LogCapture.of("dev.parley.server.delivery.Dispatcher")) {
            String lead = uid("lead");
            String leadToken = hub.createNode(lead, null);
            String asked = uid("asked");
            hub.createNode(asked, lead);
            var request = hub.post(leadToken, "/v1/messages", obj("to", asked, "text", "answer within a second",
                    "replyWithinMs", 1000));
            assertEquals(202, request.status(), request::toString);
            String damaged = request.text("id");
            try (var db = java.sql.DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("parley.db"));
                 var update = db.prepareStatement("UPDATE envelopes SET route = 'not-a-route' WHERE id = ?")) {
                db.createStatement().execute("PRAGMA busy_timeout = 10000");
                update.setString(1, damaged);
                assertEquals(1, update.executeUpdate());
            }
            // its reply deadline comes due: the scanner meets the entry it cannot read
            await().atMost(PATIENCE).until(() -> !store.records(damaged).isEmpty()
                    || !dispatcher.records("delivery scan failed").isEmpty());

            String[] retried = leadAndWebhookWorker(hub, flaky.url(), 5, 50, 100);
            String id = hub.sendOk(retried[0], retried[1], "due after the damaged entry").text("id");
            await().atMost(PATIENCE).until(() -> "delivered".equals(hub.status(retried[0], id).text("state")));
            assertEquals(List.of(1, 2), flaky.hits().stream().map(WebhookReceiver.Hit::attempt).toList());
            assertEquals(List.of(), dispatcher.messages(Level.WARNING, "delivery scan failed"));
            assertEquals(1, store.messages(Level.WARNING, damaged).size(), () -> "said once: " + store.records(damaged));
        }
    }

    /**
     * After a restart a node's whole backlog is due in the schedule at once; the scanner takes
     * up 16 of its pushes (8 running, 8 waiting for a permit) and leaves the rest there, instead
     * of a waiting thread and an envelope in memory for each.
     */
    @Test
    void aBacklogFoundAtStartIsTakenUpSixteenAtATime() {
        String[] stuck;
        try (WebhookReceiver hanging = new WebhookReceiver(n -> WebhookReceiver.HANG)) {
            try (HubFixture hub = HubFixture.start(dir, c -> c.withPushTimeout(Duration.ofMinutes(10)))) {
                stuck = leadAndWebhookWorker(hub, hanging.url(), 5, 50, 100);
                for (int i = 0; i < 100; i++) {
                    hub.sendOk(stuck[0], stuck[1], "for later " + i);
                }
            }
            int before = hanging.hits().size(); // the first hub's: more than 8 if some started while it stopped
            try (HubFixture hub = HubFixture.start(dir, c -> c.withPushTimeout(Duration.ofMinutes(10)))) {
                // 16 taken up, and no more over three passes of the scanner (one every 200 ms), each of which reads all 100
                await().atMost(PATIENCE).during(Duration.ofMillis(600))
                        .until(() -> hub.metric("parley_pushes_in_flight") == 2 * PUSHES_PER_NODE);
                await().atMost(PATIENCE).until(() -> hanging.hits().size() - before == PUSHES_PER_NODE); // 8 running
            }
        }
    }

    /**
     * Sent while the hub runs, each push is taken up as its envelope commits, up to 256 for a
     * node; a longer burst to an endpoint that does not answer waits in the schedule past that,
     * not as threads each holding its envelope.
     */
    @Test
    void aBurstToAnEndpointThatHangsIsTakenUpTo256() {
        try (HubFixture hub = HubFixture.start(dir,
                c -> HubFixture.unthrottled(c).withPushTimeout(Duration.ofMinutes(10)));
             WebhookReceiver hanging = new WebhookReceiver(n -> WebhookReceiver.HANG)) {
            String[] stuck = leadAndWebhookWorker(hub, hanging.url(), 5, 50, 100);
            for (int i = 0; i < HELD_PER_NODE + 44; i++) {
                hub.sendOk(stuck[0], stuck[1], "now " + i);
            }
            await().atMost(PATIENCE).during(Duration.ofMillis(600))
                    .until(() -> hub.metric("parley_pushes_in_flight") == HELD_PER_NODE);
            await().atMost(PATIENCE).until(() -> hanging.hits().size() == PUSHES_PER_NODE); // 8 running
        }
    }

    /**
     * What a burst left in the schedule goes out once the endpoint answers: the pushes that
     * finish take the next ones from the store, and every envelope is pushed once.
     */
    @Test
    void aBurstLeftInTheScheduleIsPushedOnceEachAsTheEndpointAnswers() {
        CountDownLatch open = new CountDownLatch(1);
        try (HubFixture hub = HubFixture.start(dir,
                c -> HubFixture.unthrottled(c).withPushTimeout(Duration.ofMinutes(10)));
             WebhookReceiver gated = new WebhookReceiver(answersOnceOpen(open))) {
            String[] pair = leadAndWebhookWorker(hub, gated.url(), 5, 50, 100);
            Set<String> ids = new HashSet<>();
            int burst = HELD_PER_NODE + 44;
            for (int i = 0; i < burst; i++) {
                ids.add(hub.sendOk(pair[0], pair[1], "burst " + i).text("id"));
            }
            await().atMost(PATIENCE).until(() -> hub.metric("parley_pushes_in_flight") == HELD_PER_NODE);
            open.countDown();
            assertPushedOnceEach(hub, gated, pair[0], ids);
        }
    }

    /**
     * Large envelopes are taken up by weight, not only by count: a burst of 200,000-character
     * envelopes to an endpoint that does not answer holds 20 of them (4 Mi characters), not 256
     * (≈ 50 M); the rest waits in the schedule and, once the endpoint answers, goes out once each.
     */
    @Test
    void aBurstOfLargeEnvelopesIsTakenUpToTheNodesCharacterBoundThenPushedOnceEach() {
        CountDownLatch open = new CountDownLatch(1);
        int chars = 200_000;
        int heldAtMost = HELD_CHARS_PER_NODE / chars;
        try (HubFixture hub = HubFixture.start(dir,
                c -> HubFixture.unthrottled(c).withPushTimeout(Duration.ofMinutes(10)));
             WebhookReceiver gated = new WebhookReceiver(answersOnceOpen(open))) {
            String[] pair = leadAndWebhookWorker(hub, gated.url(), 5, 50, 100);
            Set<String> ids = new HashSet<>();
            int burst = 2 * heldAtMost + 5;
            for (int i = 0; i < burst; i++) {
                ids.add(hub.sendOk(pair[0], pair[1], Character.toString('a' + i % 26).repeat(chars)).text("id"));
            }
            // three passes of the scanner (one every 200 ms) find the rest due and take up none of it
            await().atMost(PATIENCE).during(Duration.ofMillis(600))
                    .until(() -> hub.metric("parley_pushes_in_flight") == heldAtMost);
            open.countDown();
            assertPushedOnceEach(hub, gated, pair[0], ids);
        }
    }

    /** A push that gets no answer within the push timeout fails, and is retried on the schedule. */
    @Test
    void aPushWithoutAnAnswerTimesOutAndIsRetried() {
        try (HubFixture hub = HubFixture.start(dir, c -> c.withPushTimeout(Duration.ofMillis(500)));
             WebhookReceiver hanging = new WebhookReceiver(n -> WebhookReceiver.HANG)) {
            String[] pair = leadAndWebhookWorker(hub, hanging.url(), 5, 50, 100);
            String id = hub.sendOk(pair[0], pair[1], "anyone?").text("id");
            await().atMost(PATIENCE).until(() -> hanging.hits().size() >= 2);
            assertEquals(0, hanging.answered());
            JsonNode firstFailure = null;
            for (JsonNode step : hub.status(pair[0], id).get("timeline")) {
                if (firstFailure == null && step.get("state").asText().equals("retry_pending")) {
                    firstFailure = step;
                }
            }
            assertTrue(firstFailure != null && firstFailure.get("detail").asText()
                    .startsWith("attempt 1 failed: no answer within 500 ms"), hub.status(pair[0], id)::toString);
        }
    }

    @Test
    void badDeliverySettingsAreRefusedAndChangeNothing() {
        try (HubFixture hub = HubFixture.start(dir)) {
            String lead = uid("lead");
            String leadToken = hub.createNode(lead, null);
            String other = uid("other");
            hub.createNode(other, null);
            String path = "/v1/nodes/" + lead + "/delivery";
            for (String body : List.of("{\"webhook\":{\"url\":\"ftp://x/y\",\"secret\":\"0123456789abcdef\"}}",
                    "{\"webhook\":{\"url\":\"http://127.0.0.1/h\",\"secret\":\"short\"}}",
                    "{\"webhook\":{\"url\":\"not a url\",\"secret\":\"0123456789abcdef\"}}",
                    "{\"retry\":{\"maxAttempts\":0}}", "{\"retry\":{\"baseMs\":\"fast\"}}",
                    "{\"redeliverAfterMs\":5}", "{\"webhook\":\"http://x\"}")) {
                assertError(hub.request("PUT", path, leadToken, body.getBytes(), java.util.Map.of()), 400, "invalid_request");
            }
            assertError(hub.request("PUT", "/v1/nodes/" + other + "/delivery", leadToken,
                    "{}".getBytes(), java.util.Map.of()), 403, "forbidden");
            var read = hub.get(leadToken, path);
            assertEquals(200, read.status());
            assertTrue(read.get("webhook").isNull(), "refused settings must not stick: " + read);
            assertEquals(15, read.get("retry").get("maxAttempts").asInt());
            assertError(hub.get(hub.admin(), "/v1/dead-letters/01a20167-0000-7000-8000-000000000000"), 404,
                    "dead_letter_not_found");
        }
    }

    @Test
    void aRestartInTheMiddleOfTheBackoffResumesTheSchedule() {
        int[] answer = {503};
        WebhookReceiver receiver = new WebhookReceiver(n -> answer[0]);
        try (receiver) {
            HubFixture hub = HubFixture.start(dir);
            String[] pair = leadAndWebhookWorker(hub, receiver.url(), 10, 1_500, 1_500);
            String id = hub.sendOk(pair[0], pair[1], "survive the restart").text("id");
            await().atMost(PATIENCE).until(() -> "retry_pending".equals(hub.status(pair[0], id).text("state")));
            hub.close(); // in a backoff, or with the next attempt under way: the jitter decides
            answer[0] = 200;

            try (HubFixture again = HubFixture.start(dir)) {
                await().atMost(PATIENCE).until(() -> "delivered".equals(again.status(again.admin(), id).text("state")));
                // attempt numbers continue after the restart: none lost, none doubled but one cut short
                receiver.assertResumedAfter(WebhookReceiver.lastFailedAttempt(again.status(again.admin(), id).json()));
            }
        }
    }
}
