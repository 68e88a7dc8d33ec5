package dev.parley.server.transport;

import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.server.HubConfig;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.SseClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slow and idle connections: a client that trickles its headers (slowloris), stalls in its
 * body or sends nothing is cut after the matching timeout, one address cannot hold more
 * than its share of connections, and an SSE stream that idles between heartbeats outlives
 * every one of these timeouts. Each hub here shortens only the timeout under test; the
 * others stay long, so that the test's own pooled HTTP connections are never cut.
 */
class SlowConnectionsTest {
    private static final Duration LONG = Duration.ofSeconds(60);
    private static final Duration SHORT = Duration.ofMillis(500);

    @TempDir
    Path dataDir;

    private HubFixture hub(Duration idle, Duration header, Duration body, int perAddress) {
        return HubFixture.start(dataDir, c -> c.withTransport(new HubConfig.Transport(idle, header, body, perAddress)));
    }

    @Test
    void headersTrickledLineByLineAreCutAfterTheHeaderTimeout() {
        try (HubFixture hub = hub(LONG, SHORT, LONG, 512);
             RawHttp slowloris = RawHttp.connect(hub.port());
             ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor()) {
            slowloris.write("GET /healthz HTTP/1.1\r\nHost: hub\r\n".getBytes(StandardCharsets.ISO_8859_1));
            // A header line every 100 ms: a timeout per read would never fire, the header deadline does.
            AtomicInteger lines = new AtomicInteger();
            trickle.scheduleAtFixedRate(() -> {
                if (slowloris.write(("X-Slow-" + lines.incrementAndGet() + ": 1\r\n").getBytes(StandardCharsets.ISO_8859_1))) {
                    return;
                }
                throw new IllegalStateException("closed"); // ends the trickle
            }, 100, 100, TimeUnit.MILLISECONDS);

            assertEquals("", slowloris.readToClose(), "the hub answered headers that never ended");
            assertEquals(1.0, timeouts(hub, "header"));
            assertEquals(0.0, timeouts(hub, "idle") + timeouts(hub, "body"));
            assertTrue(lines.get() > 0, "the client kept sending while it waited");
            hub.assertStillServes();
        }
    }

    @Test
    void aBodyThatStallsIsCutAfterTheBodyTimeout() {
        try (HubFixture hub = hub(LONG, LONG, SHORT, 512)) {
            String node = uid("slow-body");
            String token = hub.createNode(node, null);
            try (RawHttp connection = RawHttp.connect(hub.port())) {
                String json = "{\"to\":\"" + node + "\",\"text\":\"never finished\"}";
                byte[] head = RawHttp.request("POST", "/v1/messages", new byte[0], "Authorization: Bearer " + token,
                        "Content-Type: application/json", "Content-Length: " + json.length());
                connection.write(head);
                connection.write(json.substring(0, 10).getBytes(StandardCharsets.ISO_8859_1)); // and no more

                assertEquals("", connection.readToClose(), "the hub answered a body that never ended");
            }
            assertEquals(1.0, timeouts(hub, "body"));
            assertEquals(List.of(), hub.inbox(token), "nothing of the cut request may land");
            hub.assertStillServes();
        }
    }

    @Test
    void aConnectionWithNoRequestIsClosedAfterTheIdleTimeout() {
        try (HubFixture hub = hub(SHORT, LONG, LONG, 512)) {
            try (RawHttp silent = RawHttp.connectFrom("127.0.0.2", hub.port());
                 RawHttp keptAlive = RawHttp.connectFrom("127.0.0.2", hub.port())) {
                keptAlive.write(RawHttp.request("GET", "/healthz", new byte[0]));
                assertEquals(200, keptAlive.readAnswer().status());

                assertEquals("", silent.readToClose(), "a connection that never sent a byte stays open");
                assertEquals("", keptAlive.readToClose(), "a kept-alive connection with no next request stays open");
            }
            assertTrue(timeouts(hub, "idle") >= 2.0, "both idle connections are counted");
            assertEquals(0.0, timeouts(hub, "header") + timeouts(hub, "body"));
        }
    }

    @Test
    void oneAddressHoldsAtMostItsShareAndAClosedConnectionFreesItsSlot() {
        int perAddress = 3;
        try (HubFixture hub = hub(LONG, LONG, LONG, perAddress)) {
            List<RawHttp> held = new ArrayList<>();
            try {
                for (int i = 0; i < perAddress; i++) {
                    held.add(RawHttp.connectFrom("127.0.0.2", hub.port()));
                }
                try (RawHttp extra = RawHttp.connectFrom("127.0.0.2", hub.port())) {
                    extra.write(RawHttp.request("GET", "/healthz", new byte[0]));
                    RawHttp.Answer refusal = extra.readAnswer();
                    assertEquals(429, refusal.status(), () -> "connection " + (perAddress + 1) + " got " + refusal);
                    assertTrue(refusal.body().contains("\"error\":\"too_many_connections\""), refusal.body());
                    assertEquals("close", refusal.header("Connection"));
                    assertEquals("", extra.readToClose());
                }
                // Another address is not affected, and the held connections still work.
                assertEquals(200, hub.get(null, "/healthz").status());
                held.getFirst().write(RawHttp.request("GET", "/healthz", new byte[0]));
                assertEquals(200, held.getFirst().readAnswer().status());
                assertTrue(hub.metric("parley_connections_refused_total") >= 1.0);

                held.removeLast().close();
                await().atMost(Duration.ofSeconds(10)).until(() -> {
                    try (RawHttp again = RawHttp.connectFrom("127.0.0.2", hub.port())) {
                        again.write(RawHttp.request("GET", "/healthz", new byte[0]));
                        return again.readAnswer().status() == 200;
                    }
                });
            } finally {
                held.forEach(RawHttp::close);
            }
        }
    }

    @Test
    void anSseStreamIdlingBetweenHeartbeatsOutlivesEveryTimeout() {
        try (HubFixture hub = HubFixture.start(dataDir, c -> c.withHeartbeat(Duration.ofMillis(1500))
                .withTransport(new HubConfig.Transport(SHORT, SHORT, SHORT, 512)))) {
            String node = uid("sse-long");
            String token = hub.createNode(node, null);
            try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", token, null)) {
                stream.expectReady(Duration.ofSeconds(5));
                // Two heartbeats: the stream idled three seconds, six times each timeout.
                for (int beat = 0; beat < 2; beat++) {
                    assertTrue(stream.next(Duration.ofSeconds(10)).isComment(), "a heartbeat was expected");
                }
                try (RawHttp sender = RawHttp.connect(hub.port())) {
                    sender.write(RawHttp.request("POST", "/v1/messages",
                            ("{\"to\":\"" + node + "\",\"text\":\"still there\"}").getBytes(StandardCharsets.UTF_8),
                            "Authorization: Bearer " + token, "Content-Type: application/json"));
                    assertEquals(202, sender.readAnswer().status());
                }
                assertEquals("still there", stream.nextEvent(Duration.ofSeconds(10)).json().path("text").asText());
                assertFalse(stream.socket().isClosed());
            }
            assertEquals(0.0, timeouts(hub, "body") + timeouts(hub, "header"), "the stream was cut");
        }
    }

    @Test
    void everyConnectionMetricIsThereFromTheStart() {
        try (HubFixture hub = hub(LONG, LONG, LONG, 512)) {
            String text = hub.get(hub.admin(), "/metrics").body();
            for (String phase : List.of("idle", "header", "body")) {
                assertTrue(text.contains("parley_connection_timeouts_total{phase=\"" + phase + "\"} 0\n"), text);
            }
            assertTrue(text.contains("parley_connections_refused_total 0\n"), text);
            assertTrue(hub.metric("parley_open_connections") >= 1.0, "the metrics call itself is a connection");
        }
    }

    private static double timeouts(HubFixture hub, String phase) {
        return hub.metric("parley_connection_timeouts_total{phase=\"" + phase + "\"}");
    }
}
