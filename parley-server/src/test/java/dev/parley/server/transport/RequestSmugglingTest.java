package dev.parley.server.transport;

import static dev.parley.server.it.HubFixture.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.server.it.HubFixture;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A request the hub answers before reading its body must not leave that body on the
 * connection to be read as the next request: behind a proxy that reuses connections, a
 * body that is itself an authenticated request would run as someone else's. Every early
 * answer (401, 404, 405, 413) is tried with a body made of complete, valid sends, with and
 * without {@code Connection: close}; none of those sends may land.
 */
class RequestSmugglingTest {
    /** Small enough that a 2 KiB body is refused with 413 too. */
    private static final int BODY_LIMIT = 1024;

    @TempDir
    static Path dataDir;
    private static HubFixture hub;

    @BeforeAll
    static void start() {
        hub = HubFixture.start(dataDir, c -> c.withMaxBodyBytes(BODY_LIMIT));
    }

    @AfterAll
    static void stop() {
        hub.close();
    }

    /** An early answer and the request that draws it, given the token of the node the hidden sends come from. */
    enum EarlyAnswer {
        UNAUTHORIZED(401) {
            byte[] request(String token, byte[] body, String... headers) {
                return RawHttp.request("POST", "/v1/messages", body, headers);
            }
        },
        NOT_FOUND(404) {
            byte[] request(String token, byte[] body, String... headers) {
                return RawHttp.request("POST", "/v1/no-such-route", body, withToken(token, headers));
            }
        },
        METHOD_NOT_ALLOWED(405) {
            byte[] request(String token, byte[] body, String... headers) {
                return RawHttp.request("PUT", "/v1/messages", body, withToken(token, headers));
            }
        },
        PAYLOAD_TOO_LARGE(413) {
            byte[] request(String token, byte[] body, String... headers) {
                return RawHttp.request("POST", "/v1/messages", body, withToken(token, headers));
            }
        };

        final int status;

        EarlyAnswer(int status) {
            this.status = status;
        }

        abstract byte[] request(String token, byte[] body, String... headers);

        private static String[] withToken(String token, String... headers) {
            List<String> all = new ArrayList<>(List.of(headers));
            all.add("Authorization: Bearer " + token);
            return all.toArray(String[]::new);
        }
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (EarlyAnswer answer : EarlyAnswer.values()) {
            for (int size : new int[] {2 * 1024, 300 * 1024}) {
                cases.add(Arguments.of(answer, size, true));
                cases.add(Arguments.of(answer, size, false));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} with a {1}-byte body, Connection: close {2}")
    @MethodSource("cases")
    void aBodyTheHubDidNotReadNeverRunsAsARequest(EarlyAnswer early, int size, boolean connectionClose) {
        String victim = uid("smuggle");
        String token = hub.createNode(victim, null);
        byte[] body = hiddenSends(victim, token, size);
        String[] headers = connectionClose ? new String[] {"Connection: close"} : new String[0];

        try (RawHttp connection = RawHttp.connect(hub.port())) {
            connection.write(early.request(token, body, headers));
            if (connectionClose) {
                connection.endOutput();
            }
            RawHttp.Answer answer = connection.readAnswer();
            assertEquals(early.status, answer.status(), () -> "unexpected answer: " + answer);
            String rest;
            if (connectionClose) {
                assertEquals("close", answer.header("Connection"), "the answer must say the connection closes");
                rest = connection.readToClose();
                assertEquals("", rest, "nothing may follow the answer on a closed connection");
            } else {
                // A real request after it gets its own answer, or the hub has closed the connection.
                connection.write(RawHttp.request("GET", "/healthz", new byte[0]));
                connection.endOutput();
                rest = connection.readToClose();
                assertTrue(rest.isEmpty() || rest.startsWith("HTTP/1.1 200") && rest.indexOf("HTTP/1.1", 1) < 0,
                        "after the early answer only the real request may be answered, got: " + rest);
            }
        }
        assertEquals(List.of(), hub.inbox(token), "a send hidden in the unread body ran");
    }

    @Test
    void noRequestAfterOneThatSaidConnectionCloseRuns() {
        String victim = uid("pipelined");
        String token = hub.createNode(victim, null);
        ByteArrayOutputStream pipelined = new ByteArrayOutputStream();
        pipelined.writeBytes(RawHttp.request("GET", "/healthz", new byte[0], "Connection: close"));
        pipelined.writeBytes(hiddenSends(victim, token, 600));

        try (RawHttp connection = RawHttp.connect(hub.port())) {
            connection.write(pipelined.toByteArray());
            connection.endOutput();
            RawHttp.Answer answer = connection.readAnswer();
            assertEquals(200, answer.status(), () -> "unexpected answer: " + answer);
            assertEquals("close", answer.header("Connection"));
            assertEquals("", connection.readToClose(), "a request after Connection: close was answered");
        }
        assertEquals(List.of(), hub.inbox(token), "a request after Connection: close ran");
    }

    @Test
    void aBodyHeldBackForExpectContinueIsNeverAskedForAfterAnEarlyAnswer() {
        String victim = uid("expect");
        String token = hub.createNode(victim, null);
        byte[] body = hiddenSends(victim, token, 2 * 1024);

        try (RawHttp connection = RawHttp.connect(hub.port())) {
            connection.write(RawHttp.request("POST", "/v1/messages", new byte[0], "Expect: 100-continue",
                    "Content-Length: " + body.length));
            RawHttp.Answer answer = connection.readAnswer();
            assertEquals(401, answer.status(), () -> "unexpected answer: " + answer);
            connection.write(body); // a client that sends its body anyway
            connection.endOutput();
            assertEquals("", connection.readToClose(), "after the final answer the hub must not ask for the body");
        }
        assertEquals(List.of(), hub.inbox(token), "a send in the body held back ran");
    }

    /** Complete, authenticated self-sends back to back, each within the body limit, {@code size} bytes in all. */
    private static byte[] hiddenSends(String victim, String token, int size) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int count = (size + BODY_LIMIT - 1) / (BODY_LIMIT - 200);
        for (int i = 0; i < count; i++) {
            byte[] head = RawHttp.request("POST", "/v1/messages", new byte[0], "Authorization: Bearer " + token,
                    "Content-Type: application/json", "Content-Length: 000000");
            String json = "{\"to\":\"" + victim + "\",\"text\":\"smuggled " + i + "\"}";
            int share = (size - out.size()) / (count - i); // this send's part of what is left
            int padding = share - head.length - json.length();
            String send = new String(head, StandardCharsets.ISO_8859_1)
                    .replace("Content-Length: 000000", String.format("Content-Length: %06d", json.length() + padding))
                    + json + " ".repeat(padding);
            out.writeBytes(send.getBytes(StandardCharsets.ISO_8859_1));
        }
        assertEquals(size, out.size(), "the hidden sends must fill the body exactly");
        return out.toByteArray();
    }
}
