package dev.parley.bench.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bench's HTTP client against a real socket whose answers are written byte for byte:
 * chunked bodies cut at every awkward place, trailers, keep-alive after a chunked body, and
 * SSE lines ended by LF, CR and CR LF, read on a thread of their own and by an {@link SseFleet}.
 * (The hub itself is the other side in every bench test; this pins the framings it does not use.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpClientTest {
    private ServerSocket server;

    @BeforeEach
    void listen() throws IOException {
        server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
    }

    /** Serves one connection: for each request head read, writes the next answer, one small write at a time. */
    private CompletableFuture<List<String>> serve(String... answers) {
        return CompletableFuture.supplyAsync(() -> {
            List<String> requests = new ArrayList<>();
            try (Socket s = server.accept()) {
                s.setTcpNoDelay(true);
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                for (String answer : answers) {
                    requests.add(readHead(in));
                    byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
                    for (int i = 0; i < bytes.length; i += 3) {
                        out.write(bytes, i, Math.min(3, bytes.length - i));
                        out.flush();
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return requests;
        });
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed in the request head");
            }
            head.write(b);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    @Test
    void aChunkedAnswerWithTrailersIsReadWholeAndTheConnectionIsKept() throws Exception {
        CompletableFuture<List<String>> requests = serve(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "5;ext=1\r\n{\"seq\r\n" + "B\r\n\":42,\"a\":\"b\r\n" + "2\r\n\"}\r\n" + "0\r\nX-Trailer: t\r\n\r\n",
                "HTTP/1.1 202 Accepted\r\nContent-Length: 9\r\n\r\n{\"seq\":7}");
        HttpConnection conn = new HttpConnection("127.0.0.1", server.getLocalPort(), 10_000);
        try {
            HttpConnection.Response first = conn.call("GET", "/one", "tok", null);
            assertEquals(200, first.status());
            assertEquals("{\"seq\":42,\"a\":\"b\"}", first.body());
            assertEquals(42, conn.bodyLongField("\"seq\":".getBytes(StandardCharsets.US_ASCII)));
            HttpConnection.Response second = conn.call("POST", "/two", "tok", "{}");
            assertEquals(202, second.status());
            assertEquals(7, conn.bodyLongField("\"seq\":".getBytes(StandardCharsets.US_ASCII)));
        } finally {
            conn.close();
        }
        List<String> heads = requests.get(30, TimeUnit.SECONDS);
        assertTrue(heads.get(0).startsWith("GET /one HTTP/1.1\r\n"), heads.get(0));
        assertTrue(heads.get(0).contains("Authorization: Bearer tok\r\n"), heads.get(0));
        assertTrue(heads.get(1).startsWith("POST /two HTTP/1.1\r\n"), heads.get(1));
    }

    /** A chunked stream whose lines end with LF, CR LF and CR, cut into chunks mid-line and between CR and LF. */
    private static final String STREAM = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            + "Transfer-Encoding: chunked\r\n\r\n"
            + chunk(": parley ready\n\nid: 1\nevent: envelope\ndata: {\"id\":\"e1\"}\n\n")
            + chunk("id: 2\r\ndata: first line\r") + chunk("\ndata: sec") + chunk("ond line\r\n\r\n")
            + chunk("id: x3\rdata: no number\r\r") + chunk(": heartbeat\n\n") + "0\r\n\r\n";

    private static String chunk(String s) {
        return Integer.toHexString(s.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + s + "\r\n";
    }

    /** What a listener saw, in order. */
    private static final class Seen implements SseStream.Listener {
        final List<String> items = new ArrayList<>();
        final CountDownLatch ended = new CountDownLatch(1);
        volatile String endError = "not ended";

        @Override
        public synchronized void onComment(String text) {
            items.add("comment" + text);
        }

        @Override
        public synchronized void onEvent(long id, String event, byte[] data, int dataLength) {
            items.add(id + " " + event + " " + new String(data, 0, dataLength, StandardCharsets.UTF_8));
        }

        @Override
        public void onEnd(String error) {
            endError = error;
            ended.countDown();
        }

        synchronized List<String> items() {
            return List.copyOf(items);
        }
    }

    @Test
    void aStreamReadOnItsOwnThreadGivesEveryEventAndComment() throws Exception {
        CompletableFuture<List<String>> requests = serve(STREAM);
        Seen seen = new Seen();
        SseStream stream = new HttpConnection("127.0.0.1", server.getLocalPort(), 10_000)
                .openStream("/v1/inbox/stream", "tok", "Last-Event-ID: 0\r\n", seen, true);
        stream.run();

        assertEquals(List.of("comment parley ready", "1 envelope {\"id\":\"e1\"}", "2 message first line\nsecond line",
                "-1 message no number", "comment heartbeat"), seen.items());
        assertNull(seen.endError, "the last chunk ends the stream without an error");
        String head = requests.get(30, TimeUnit.SECONDS).getFirst();
        assertTrue(head.contains("Accept: text/event-stream\r\n") && head.contains("Last-Event-ID: 0\r\n"), head);
    }

    @Test
    void aFleetReadsTheSameStreamWithoutData() throws Exception {
        serve(STREAM);
        Seen seen = new Seen();
        try (SseFleet fleet = new SseFleet(1)) {
            fleet.add(HttpConnection.selectable("127.0.0.1", server.getLocalPort(), 10_000)
                    .openStream("/v1/inbox/stream", "tok", "", seen, false));
            assertTrue(seen.ended.await(30, TimeUnit.SECONDS), "the stream should end at its last chunk");
        }
        assertNull(seen.endError, "the last chunk ends the stream without an error");
        assertEquals(List.of("comment parley ready", "1 envelope ", "2 message ", "-1 message ", "comment heartbeat"),
                seen.items());
    }

    @Test
    void aStreamAnsweredWithAnErrorIsNotOpened() throws Exception {
        serve("HTTP/1.1 401 Unauthorized\r\nContent-Length: 26\r\n\r\n{\"error\":\"unauthorized\"}  ");
        IOException e = assertThrows(IOException.class,
                () -> new HttpConnection("127.0.0.1", server.getLocalPort(), 10_000)
                        .openStream("/v1/inbox/stream", "bad", "", new Seen(), false));
        assertTrue(e.getMessage().contains("401") && e.getMessage().contains("unauthorized"), e.getMessage());
    }
}
