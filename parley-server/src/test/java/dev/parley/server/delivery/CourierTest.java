package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.core.Webhook;
import dev.parley.core.WebhookSignature;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The courier's connections against endpoints written at the socket level, so that what
 * happens on the wire (which connection a push came on, how the answer ends) is chosen by the test.
 */
class CourierTest {
    private static final String SECRET = "a-courier-test-secret";

    /** What an endpoint does with each request, given its connection's request count (from 1) and the request. */
    private interface Answer {
        /** Writes the answer; false closes the connection afterwards. */
        boolean write(OutputStream out, int onConnection, String request) throws IOException, InterruptedException;
    }

    /** A loopback HTTP endpoint: one thread per connection, every request's head and body kept. */
    private static final class Endpoint implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final AtomicInteger connections = new AtomicInteger();
        final List<String> requests = new CopyOnWriteArrayList<>();
        final List<Socket> sockets = new CopyOnWriteArrayList<>();

        Endpoint(Answer answer) throws IOException {
            Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket s = server.accept();
                        sockets.add(s);
                        connections.incrementAndGet();
                        Thread.ofVirtual().start(() -> serve(s, answer));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }

        private void serve(Socket s, Answer answer) {
            try (s; BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(),
                    StandardCharsets.ISO_8859_1))) {
                for (int n = 1; ; n++) {
                    StringBuilder head = new StringBuilder();
                    int length = 0;
                    for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
                        head.append(line).append('\n');
                        if (line.toLowerCase().startsWith("content-length:")) {
                            length = Integer.parseInt(line.substring(15).trim());
                        }
                    }
                    if (head.isEmpty()) {
                        return;
                    }
                    char[] body = new char[length];
                    for (int got = 0; got < length; ) {
                        got += in.read(body, got, length - got);
                    }
                    String request = head + "\n" + new String(body);
                    requests.add(request);
                    if (!answer.write(s.getOutputStream(), n, request)) {
                        return;
                    }
                }
            } catch (IOException e) {
                // the courier closed the connection
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        Webhook webhook() {
            return Webhook.of("http://127.0.0.1:" + server.getLocalPort() + "/hook?k=1", SECRET);
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }

    private static Envelope envelope(String id) {
        return new Envelope(id, 1, new NodeId("lead"), new NodeId("worker"), "message", Optional.of("hello"),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(),
                Instant.parse("2026-01-01T00:00:00Z"), new Trace(1, Route.INTRA_GROUP, "v1"));
    }

    private static void write(OutputStream out, String answer) throws IOException {
        out.write(answer.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    @Test
    void pushesShareOneKeptConnectionWhateverTheAnswerBodyLooksLike() throws Exception {
        try (Courier courier = new Courier(Duration.ofSeconds(10));
             Endpoint endpoint = new Endpoint((out, n, request) -> {
                 switch (n % 3) {
                     case 1 -> write(out, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                     case 2 -> write(out, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked"
                             + "\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nTrailer-One: 1\r\n\r\n");
                     default -> write(out, "HTTP/1.1 204 No Content\r\n\r\n");
                 }
                 return true;
             })) {
            int[] statuses = new int[6];
            for (int i = 0; i < statuses.length; i++) {
                statuses[i] = ((Courier.Outcome.Delivered) courier.push(endpoint.webhook(), envelope("e" + i))).status();
            }
            assertEquals("[200, 202, 204, 200, 202, 204]", java.util.Arrays.toString(statuses));
            assertEquals(1, endpoint.connections.get(), "every push on the one kept connection");
            String first = endpoint.requests.getFirst();
            assertTrue(first.startsWith("POST /hook?k=1 HTTP/1.1\nHost: 127.0.0.1:"), first);
            String body = first.substring(first.indexOf("\n\n") + 2);
            assertTrue(first.contains("Parley-Event-Id: e0\n") && first.contains("Parley-Attempt: 1\n")
                    && first.contains("Content-Type: application/json\n")
                    && first.contains(WebhookSignature.HEADER + ": " + WebhookSignature.sign(SECRET,
                    body.getBytes(StandardCharsets.UTF_8)) + "\n"), first);
        }
    }

    @Test
    void aConnectionTheEndpointClosedWhileIdleIsReplacedWithoutLosingThePush() throws Exception {
        // answers as if keeping the connection, then closes it: the next push finds it dead
        try (Courier courier = new Courier(Duration.ofSeconds(10));
             Endpoint endpoint = new Endpoint((out, n, request) -> {
                 write(out, "HTTP/1.1 204 No Content\r\n\r\n");
                 return false;
             })) {
            for (int i = 0; i < 3; i++) {
                assertEquals(new Courier.Outcome.Delivered(204), courier.push(endpoint.webhook(), envelope("e" + i)));
            }
            assertEquals(3, endpoint.requests.size(), "each push once");
            assertEquals(3, endpoint.connections.get());
        }
    }

    @Test
    void anEndpointThatNeverAnswersIsGivenUpAtTheDeadline() throws Exception {
        try (Courier courier = new Courier(Duration.ofMillis(300));
             Endpoint endpoint = new Endpoint((out, n, request) -> {
                 write(out, "HTTP/1.1 200 OK\r\nContent-Le"); // starts an answer, never ends it
                 return true;
             })) {
            long start = System.nanoTime();
            assertEquals(new Courier.Outcome.Refused("no answer within 300 ms"),
                    courier.push(endpoint.webhook(), envelope("e1")));
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(tookMs >= 290 && tookMs < 5_000, "gave up after " + tookMs + " ms");
        }
    }

    @Test
    void aTlsHandshakeThatTricklesIsGivenUpAtTheDeadline() throws Exception {
        // Announces a 16 KiB handshake record, then sends one byte of it every 50 ms: every read
        // of the handshake is answered in time, so only the push's deadline can end it.
        try (Courier courier = new Courier(Duration.ofMillis(300));
             ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> {
                try (Socket s = server.accept(); OutputStream out = s.getOutputStream()) {
                    out.write(new byte[] {0x16, 0x03, 0x03, 0x40, 0x00});
                    for (int i = 0; i < 0x4000; i++) {
                        out.write(0x02);
                        out.flush();
                        Thread.sleep(50); // the endpoint's pace, which the courier must not wait out
                    }
                } catch (IOException | InterruptedException e) {
                    // the courier closed the connection, or the test ended
                }
            });
            Webhook webhook = Webhook.of("https://127.0.0.1:" + server.getLocalPort() + "/hook", SECRET);
            long start = System.nanoTime();
            // preemptive: a handshake the deadline does not end holds the pushing thread for 14 minutes
            assertEquals(new Courier.Outcome.Refused("no answer within 300 ms"),
                    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> courier.push(webhook, envelope("e1"))));
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(tookMs >= 290 && tookMs < 5_000, "gave up after " + tookMs + " ms");
        }
    }

    @Test
    void anEndpointWithNoConnectionLeftIsForgotten() throws Exception {
        // keeps the first connection, closes it after the second push: nothing is left to keep
        try (Courier courier = new Courier(Duration.ofSeconds(10));
             Endpoint endpoint = new Endpoint((out, n, request) -> {
                 write(out, n == 1 ? "HTTP/1.1 204 No Content\r\n\r\n" : "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
                 return n == 1;
             })) {
            assertEquals(new Courier.Outcome.Delivered(204), courier.push(endpoint.webhook(), envelope("e1")));
            assertEquals(1, courier.endpointsKept(), "the connection is kept for the next push");
            assertEquals(new Courier.Outcome.Delivered(204), courier.push(endpoint.webhook(), envelope("e2")));
            await().atMost(Duration.ofSeconds(30)).until(() -> courier.endpointsKept() == 0); // the 5 s sweep
        }
    }

    @Test
    void bytesPastAnAnswerAreNeverReadAsTheNextPushsAnswer() throws Exception {
        try (Courier courier = new Courier(Duration.ofSeconds(10));
             Endpoint endpoint = new Endpoint((out, n, request) -> {
                 if (request.contains("Parley-Event-Id: e0\n")) {
                     // a 204 with a body after it, in one write: the stray answer must not be e1's
                     write(out, "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 500 Stray\r\nContent-Length: 0\r\n\r\n");
                 } else {
                     write(out, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                 }
                 return true;
             })) {
            assertEquals(new Courier.Outcome.Delivered(204), courier.push(endpoint.webhook(), envelope("e0")));
            assertEquals(new Courier.Outcome.Delivered(200), courier.push(endpoint.webhook(), envelope("e1")));
            assertEquals(2, endpoint.connections.get(), "the connection with bytes left over was not reused");
            assertEquals(2, endpoint.requests.size());
        }
    }

    @Test
    void aReusedConnectionWaitsThePushsWholeTimeoutAndNeverPostsTwice() throws Exception {
        // e1's first connection dies after 1,800 of its 3,000 ms, so its second one opens with
        // 1,200 ms left; e2 reuses that connection and is answered after 2,000 ms: within its own
        // timeout, with a second to spare for a busy machine
        try (Courier courier = new Courier(Duration.ofMillis(3_000));
             Endpoint endpoint = new Endpoint((out, n, request) -> {
                 if (request.contains("Parley-Event-Id: e1\n") && n == 2) {
                     Thread.sleep(1_800);
                     return false; // closes without answering, as an endpoint that dropped an idle connection
                 }
                 if (request.contains("Parley-Event-Id: e2\n")) {
                     Thread.sleep(2_000);
                 }
                 write(out, "HTTP/1.1 204 No Content\r\n\r\n");
                 return true;
             })) {
            for (String id : List.of("e0", "e1", "e2")) {
                assertEquals(new Courier.Outcome.Delivered(204), courier.push(endpoint.webhook(), envelope(id)), id);
            }
            assertEquals(1, endpoint.requests.stream().filter(r -> r.contains("Parley-Event-Id: e2\n")).count(),
                    "e2 posted once");
            assertEquals(2, endpoint.connections.get(), "e2 went on the connection e1 opened");
        }
    }
}
