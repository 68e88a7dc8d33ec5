package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.parley.server.it.HubFixture.Resp;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No answer tells a caller whether something it may not see exists: without a token, every
 * route under {@code /a2a/{node}} answers 401 whether the node exists or not; with a token,
 * a message or task the caller is no party to answers exactly like one that does not exist.
 */
class UnknownOrNotYoursTest {
    private static final String NO_SUCH_MESSAGE = "0193f0c4-0000-7000-8000-000000000000";
    private static final Map<String, String> V1 = Map.of("A2A-Version", "1.0", "Content-Type", "application/json");

    @TempDir
    static Path dir;
    static HubFixture hub;
    static String leadToken;
    static String workerToken;
    static String strangerToken;

    @BeforeAll
    static void start() {
        hub = HubFixture.start(dir);
        leadToken = hub.createNode("lead", null);
        workerToken = hub.createNode("worker", "lead");
        strangerToken = hub.createNode("stranger", null);
    }

    @AfterAll
    static void stop() {
        hub.close();
    }

    @Test
    void withoutATokenAnAgentThatExistsAnswersLikeOneThatDoesNot() {
        byte[] send = utf8("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":"
                + "{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hi\"}]}}}");
        List<Function<String, Resp>> probes = List.of(
                node -> hub.request("POST", "/a2a/" + node, null, send, V1),
                node -> hub.request("POST", "/a2a/" + node, null, send, Map.of("Content-Type", "application/json")),
                node -> hub.request("POST", "/a2a/" + node + "/message:send", null, utf8("{}"), V1),
                node -> hub.request("GET", "/a2a/" + node + "/tasks", null, null, V1),
                node -> hub.request("GET", "/a2a/" + node + "/extendedAgentCard", null, null, V1),
                node -> hub.request("GET", "/a2a/" + node + "/.well-known/agent-card.json", null, null, V1),
                node -> hub.request("GET", "/a2a/" + node + "/.well-known/agent-card.json", null, null, Map.of()));
        for (Function<String, Resp> probe : probes) {
            Resp known = probe.apply("worker");
            Resp unknown = probe.apply("nobody");
            assertEquals(401, known.status(), known::toString);
            assertEquals(withoutTimes(known.body()), withoutTimes(unknown.body()).replace("nobody", "worker"),
                    "the same answer for an agent that exists and one that does not");
        }
        assertEquals(200, hub.get(null, "/.well-known/agent-card.json").status(), "the hub's card names no node");
        assertEquals(200, hub.get(strangerToken, "/a2a/worker/.well-known/agent-card.json").status(),
                "any token reads a node's card");
        assertEquals(404, hub.get(strangerToken, "/a2a/nobody/.well-known/agent-card.json").status());
    }

    @Test
    void aMessageOfOthersAnswersLikeOneThatDoesNotExist() {
        String id = hub.sendOk(leadToken, "worker", "between us").text("id");
        Map<String, Function<String, Resp>> probes = Map.of(
                "status", m -> hub.status(strangerToken, m),
                "ack", m -> hub.post(strangerToken, "/v1/messages/" + m + "/ack", obj("status", "processed")),
                "reply", m -> hub.post(strangerToken, "/v1/messages/" + m + "/reply", obj("text", "me too")));
        probes.forEach((what, probe) -> {
            Resp theirs = assertError(probe.apply(id), 404, "message_not_found");
            Resp none = assertError(probe.apply(NO_SUCH_MESSAGE), 404, "message_not_found");
            assertEquals(none.body().replace(NO_SUCH_MESSAGE, id), theirs.body(), what);
        });
        // a party may know the message exists: the sender is told what it may not do
        assertError(hub.post(leadToken, "/v1/messages/" + id + "/ack", obj("status", "processed")), 403, "forbidden");
        assertError(hub.post(leadToken, "/v1/messages/" + id + "/reply", obj("text", "self")), 403, "forbidden");
        assertEquals(200, hub.status(workerToken, id).status());
    }

    @Test
    void aTaskOfOthersAnswersLikeOneThatDoesNotExist() {
        Resp created = hub.post(leadToken, "/v1/tasks", obj("to", "worker", "title", "private work"));
        assertEquals(201, created.status(), created::toString);
        String id = created.text("id");
        String none = "t-does-not-exist";
        Map<String, Function<String, Resp>> probes = Map.of(
                "show", t -> hub.get(strangerToken, "/v1/tasks/" + t),
                "event", t -> hub.post(strangerToken, "/v1/tasks/" + t + "/events", obj("type", "accept")),
                "cancel", t -> hub.post(strangerToken, "/v1/tasks/" + t + "/cancel", obj()));
        probes.forEach((what, probe) -> {
            Resp theirs = assertError(probe.apply(id), 404, "task_not_found");
            Resp missing = assertError(probe.apply(none), 404, "task_not_found");
            assertEquals(missing.body().replace(none, id), theirs.body(), what);
        });
        assertError(hub.post(leadToken, "/v1/tasks/" + id + "/events", obj("type", "accept")), 403, "forbidden");
        assertError(hub.post(workerToken, "/v1/tasks/" + id + "/cancel", obj()), 403, "forbidden");
    }

    /** The ErrorInfo timestamp of the A2A bodies differs between two calls. */
    private static String withoutTimes(String body) {
        return body.replaceAll("\"timestamp\":\"[^\"]*\"", "\"timestamp\":\"\"");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
