package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's two parts on the hub: its static files under {@code /console} (no data, strict
 * headers) and the live flow {@code GET /v1/messages/stream}, which shows each caller only the
 * envelopes {@code GET /v1/messages/{id}} would show it. The pages themselves are driven in a
 * browser by e2e/console.
 */
class ConsoleAndFlowTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    static Path dir;
    static HubFixture hub;
    static String lead;
    static String worker;
    static String other;

    @BeforeAll
    static void start() {
        hub = HubFixture.start(dir);
        lead = hub.createNode("flow-lead", null);
        worker = hub.createNodeResp(lead, "flow-worker", null).text("token");
        hub.createNodeResp(lead, "flow-sibling", null);
        other = hub.createNode("flow-other", null);
        hub.createNodeResp(other, "flow-other-child", null);
    }

    @AfterAll
    static void stop() {
        hub.close();
    }

    @Test
    void theAdminSeesEveryCommitAndANodeOnlyItsOwn() {
        try (SseClient all = SseClient.open(hub, "/v1/messages/stream", hub.admin(), null);
             SseClient mine = SseClient.open(hub, "/v1/messages/stream", worker, null)) {
            all.expectReady(WAIT);
            mine.expectReady(WAIT);
            String elsewhere = hub.sendOk(other, "flow-other-child", "not the worker's").text("id");
            String sibling = hub.sendOk(lead, "flow-sibling", "the sibling's").text("id");
            String own = hub.sendOk(lead, "flow-worker", "the worker's").text("id");

            List<SseClient.Frame> seen = all.nextEvents(3, WAIT);
            assertEquals(List.of(elsewhere, sibling, own), seen.stream().map(f -> f.json().path("id").asText()).toList());
            assertEquals("message", seen.getFirst().event());
            assertEquals(null, seen.getFirst().id(), "the flow is live only: no cursor");
            // commits reach followers in order, so the worker's first event proves it was shown neither earlier one
            SseClient.Frame first = mine.nextEvent(WAIT);
            assertEquals(own, first.json().path("id").asText());
            assertEquals("the worker's", first.json().path("text").asText());
        }
    }

    @Test
    void aRotatedTokenEndsItsStreamBeforeAnythingMoreIsShown() {
        String token = hub.createNodeResp(lead, "flow-rotated", null).text("token");
        try (SseClient stream = SseClient.open(hub, "/v1/messages/stream", token, null)) {
            stream.expectReady(WAIT);
            assertEquals(200, hub.post(hub.admin(), "/v1/nodes/flow-rotated/token", obj()).status());
            hub.sendOk(lead, "flow-rotated", "after the rotation");
            assertTrue(stream.drainUntilEnd(WAIT).stream().allMatch(SseClient.Frame::isComment),
                    "no envelope after the token stopped working");
        }
    }

    /**
     * A console that stops reading holds up neither the writer nor memory: the big envelopes fill
     * the TCP buffers, the small ones after them fill its queue, and what does not fit is dropped,
     * counted and announced once it reads again. Every send is answered meanwhile.
     */
    @Test
    void aStuckFollowerLosesWhatDoesNotFitAndIsToldSo(@TempDir Path own) throws Exception {
        try (HubFixture stalled = HubFixture.start(own,
                c -> HubFixture.unthrottled(c).withSlowReaderTimeout(Duration.ofMinutes(10)))) {
            String from = stalled.createNode("stuck-from", null);
            stalled.createNodeResp(from, "stuck-to", null);
            SseClient stuck = SseClient.open(stalled.port(), "/v1/messages/stream", stalled.admin(), null, 4096, false);
            try (stuck) {
                String big = "b".repeat(16 * 1024);
                for (int i = 0; i < 512; i++) { // 8 MiB: far beyond the TCP buffers
                    stalled.sendOk(from, "stuck-to", big);
                }
                for (int i = 0; i < 2 * 1024; i++) { // twice what a follower's queue holds
                    stalled.sendOk(from, "stuck-to", "small " + i);
                }
                stuck.startReading();
                stuck.expectReady(WAIT);
                long announced = 0;
                while (announced == 0) {
                    SseClient.Frame frame = stuck.next(WAIT);
                    announced = frame.comments().stream().filter(c -> c.startsWith("dropped "))
                            .mapToLong(c -> Long.parseLong(c.substring("dropped ".length()))).sum();
                }
                // every drop came while it was stuck, and was announced at once when it read again
                assertEquals(Long.toString(announced), stalled.get(stalled.admin(), "/metrics").body().lines()
                        .filter(l -> l.startsWith("parley_flow_dropped_total ")).findFirst().orElseThrow()
                        .substring("parley_flow_dropped_total ".length()));
            }
        }
    }

    @Test
    void anInboxSummarySaysItsBacklogAndLastDelivery() {
        String token = hub.createNodeResp(lead, "flow-summarized", null).text("token");
        hub.sendOk(lead, "flow-summarized", "one");
        hub.sendOk(lead, "flow-summarized", "two");
        HubFixture.Resp before = hub.get(hub.admin(), "/v1/nodes/flow-summarized/inbox/summary");
        assertEquals(200, before.status(), before::toString);
        assertEquals(2, before.num("head"));
        assertEquals(2, before.num("backlog"));
        assertTrue(before.get("lastDeliveredAt").isNull(), before::toString);

        assertEquals(2, hub.get(token, "/v1/inbox").items().size()); // a page read by its owner takes delivery
        HubFixture.Resp after = hub.get(token, "/v1/inbox/summary");
        assertEquals("flow-summarized", after.text("node"));
        assertEquals(2, after.num("head"));
        assertEquals(0, after.num("backlog"));
        assertTrue(after.text("lastDeliveredAt").endsWith("Z"), after::toString);

        assertError(hub.get(lead, "/v1/nodes/flow-summarized/inbox/summary"), 403, "forbidden");
        assertError(hub.get(hub.admin(), "/v1/inbox/summary"), 403, "forbidden");
    }

    @Test
    void theFlowNeedsAToken() {
        assertError(hub.get(null, "/v1/messages/stream"), 401, "unauthorized");
        assertError(hub.get("pn_nobody", "/v1/messages/stream"), 401, "unauthorized");
    }

    @Test
    void theConsoleIsStaticFilesWithAStrictPolicy() {
        HubFixture.Resp moved = hub.get(null, "/console");
        assertEquals(301, moved.status());
        assertEquals("/console/", moved.headers().firstValue("Location").orElseThrow());

        HubFixture.Resp page = hub.get(null, "/console/");
        assertEquals(200, page.status(), page::toString);
        assertTrue(page.headers().firstValue("Content-Type").orElseThrow().startsWith("text/html"));
        assertEquals("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
                page.headers().firstValue("Content-Security-Policy").orElseThrow());
        assertEquals("nosniff", page.headers().firstValue("X-Content-Type-Options").orElseThrow());
        assertEquals("no-referrer", page.headers().firstValue("Referrer-Policy").orElseThrow());
        assertTrue(page.body().contains("<script type=\"module\" src=\"console.js\"></script>"));

        String etag = page.headers().firstValue("ETag").orElseThrow();
        assertEquals(304, hub.request("GET", "/console/", null, new byte[0], Map.of("If-None-Match", etag)).status());

        for (String library : List.of("/console/lib/cytoscape.js", "/console/lib/uplot.js", "/console/console.js")) {
            HubFixture.Resp script = hub.get(null, library);
            assertEquals(200, script.status(), library);
            assertTrue(script.headers().firstValue("Content-Type").orElseThrow().startsWith("text/javascript"), library);
        }
        assertError(hub.get(null, "/console/secrets.txt"), 404, "not_found");
        assertError(hub.get(null, "/console/lib/..%2F..%2Fadmin.token"), 400, "invalid_request");
        assertError(hub.post(null, "/console/", obj()), 405, "method_not_allowed");
    }

    /** The flow waits for commits without a timeout; the stream watchdog wakes an idle one for its heartbeat. */
    @Test
    void anIdleFlowKeepsGettingHeartbeats(@TempDir Path beatDir) {
        try (HubFixture beating = HubFixture.start(beatDir, c -> c.withHeartbeat(Duration.ofMillis(300)));
             SseClient flow = SseClient.open(beating, "/v1/messages/stream", beating.admin(), null)) {
            flow.expectReady(WAIT);
            for (int beat = 0; beat < 3; beat++) {
                SseClient.Frame hb = flow.next(WAIT);
                assertTrue(hb.isComment(), "heartbeats are comments: " + hb);
                assertEquals(List.of("hb"), hb.comments());
            }
        }
    }
}
