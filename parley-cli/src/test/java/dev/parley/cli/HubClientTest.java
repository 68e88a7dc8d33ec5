package dev.parley.cli;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What {@link HubClient} does on the wire when the other end misbehaves, against a plain
 * socket server that records every request it reads. (Its calls against a real hub are
 * exercised by every command test.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HubClientTest {
    private Peer peer;

    @AfterEach
    void stop() throws IOException {
        if (peer != null) {
            peer.close();
        }
    }

    @Test
    void aSendIsPostedOnceWhenTheConnectionDiesBeforeTheAnswer() throws Exception {
        peer = new Peer(request -> null); // reads the request, then closes without a word
        try (HubClient client = new HubClient(peer.uri(), "pn_token")) {
            HubException failure = assertThrows(HubException.class, () -> client.post("/v1/messages",
                    CliRun.JSON.createObjectNode().put("to", "w1").put("text", "once")));
            assertEquals("unreachable", failure.code());
        }
        // The JDK's connection resends a buffered POST once after such a failure, unasked; a
        // send must reach the hub once, whatever happens to its answer.
        assertEquals(List.of("POST /v1/messages"), peer.requests());
    }

    @Test
    void aRedirectIsReportedNotFollowed() throws Exception {
        peer = new Peer(request -> "HTTP/1.1 307 Temporary Redirect\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n");
        try (HubClient client = new HubClient(peer.uri(), "pn_token")) {
            HubException failure = assertThrows(HubException.class, () -> client.get("/v1/inbox/summary"));
            assertEquals("http_307", failure.code());
        }
        assertEquals(List.of("GET /v1/inbox/summary"), peer.requests());
    }

    @Test
    void aRefusalOfAPostKeepsTheHubsCode() throws Exception {
        String refusal = "{\"error\":\"node_proof_invalid\",\"message\":\"the proof is not signed by the node's key\"}";
        peer = new Peer(request -> "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"parley\"\r\n"
                + "Content-Type: application/json\r\nContent-Length: " + refusal.length() + "\r\n\r\n" + refusal);
        try (HubClient client = new HubClient(peer.uri(), "pn_token")) {
            HubException failure = assertThrows(HubException.class, () -> client.post("/v1/nodes/n1/token",
                    CliRun.JSON.createObjectNode().put("proof", "x")));
            assertEquals("node_proof_invalid", failure.code());
            assertEquals("the proof is not signed by the node's key", failure.getMessage());
            assertEquals(ExitStatus.UNAUTHORIZED, failure.exitStatus());
        }
    }

    /** A loopback server: reads each request (head and Content-Length body), answers what {@code answer} gives, or closes. */
    private static final class Peer implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final List<String> requests = new CopyOnWriteArrayList<>();
        private final Function<String, String> answer;

        Peer(Function<String, String> answer) throws IOException {
            this.answer = answer;
            Thread.ofVirtual().start(this::serve);
        }

        URI uri() {
            return URI.create("http://127.0.0.1:" + server.getLocalPort());
        }

        List<String> requests() {
            return List.copyOf(requests);
        }

        private void serve() {
            while (!server.isClosed()) {
                try (Socket socket = server.accept()) {
                    String head = readHead(socket.getInputStream());
                    String line = head.substring(0, head.indexOf('\r'));
                    requests.add(line.substring(0, line.lastIndexOf(' ')));
                    socket.getInputStream().readNBytes(contentLength(head));
                    String reply = answer.apply(line);
                    if (reply != null) {
                        socket.getOutputStream().write(reply.getBytes(StandardCharsets.UTF_8));
                        socket.getOutputStream().flush();
                    }
                } catch (IOException e) {
                    // closed by the test, or the client gave up: nothing to record
                }
            }
        }

        private static String readHead(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("the client closed mid-request");
                }
                head.write(b);
            }
            return head.toString(StandardCharsets.ISO_8859_1);
        }

        private static int contentLength(String head) {
            for (String header : head.split("\r\n")) {
                if (header.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    return Integer.parseInt(header.substring("content-length:".length()).strip());
                }
            }
            return 0;
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
