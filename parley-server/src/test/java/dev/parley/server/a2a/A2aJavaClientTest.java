package dev.parley.server.a2a;

import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.parley.server.it.HubFixture;
import io.a2a.A2A;
import io.a2a.client.Client;
import io.a2a.client.ClientEvent;
import io.a2a.client.TaskEvent;
import io.a2a.client.TaskUpdateEvent;
import io.a2a.client.config.ClientConfig;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfig;
import io.a2a.client.transport.spi.interceptors.ClientCallContext;
import io.a2a.spec.A2AClientException;
import io.a2a.spec.AgentCard;
import io.a2a.spec.DataPart;
import io.a2a.spec.FilePart;
import io.a2a.spec.FileWithUri;
import io.a2a.spec.Message;
import io.a2a.spec.Part;
import io.a2a.spec.PushNotificationConfig;
import io.a2a.spec.Task;
import io.a2a.spec.TaskArtifactUpdateEvent;
import io.a2a.spec.TaskIdParams;
import io.a2a.spec.TaskPushNotificationConfig;
import io.a2a.spec.TaskQueryParams;
import io.a2a.spec.TaskState;
import io.a2a.spec.TaskStatusUpdateEvent;
import io.a2a.spec.TextPart;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

/**
 * Drives the A2A surface with the official A2A Java client (io.github.a2asdk 0.3.3.Final, the
 * v0.3 JSON-RPC wire, no A2A-Version header): send, stream, get, resubscribe, cancel and push
 * configs, with the assignee moving the Parley task over the REST API.
 */
class A2aJavaClientTest {
    @TempDir
    static Path dir;
    static HubFixture hub;
    static String lead;
    static String worker;
    static String stranger;
    static AgentCard card;

    @BeforeAll
    static void start() throws Exception {
        hub = HubFixture.start(dir);
        lead = hub.createNode("lead", null);
        worker = hub.createNode("worker", "lead");
        stranger = hub.createNode("stranger", null);
        card = A2A.getAgentCard(hub.url() + "/a2a/worker", "/a2a/worker/.well-known/agent-card.json",
                Map.of("Authorization", "Bearer " + lead));
    }

    @AfterAll
    static void stop() {
        hub.close();
    }

    private static ClientCallContext as(String token) {
        return new ClientCallContext(Map.of(), Map.of("Authorization", "Bearer " + token));
    }

    private static Client client(boolean streaming, boolean polling, List<BiConsumer<ClientEvent, AgentCard>> consumers)
            throws Exception {
        return Client.builder(card)
                .clientConfig(new ClientConfig.Builder().setStreaming(streaming).setPolling(polling).build())
                .withTransport(JSONRPCTransport.class, new JSONRPCTransportConfig())
                .addConsumers(consumers)
                .streamingErrorHandler(e -> { })
                .build();
    }

    private static Message message(String text) {
        return new Message.Builder().role(Message.Role.USER).messageId(UUID.randomUUID().toString())
                .parts(List.of(new TextPart(text))).build();
    }

    /** Sends without streaming or blocking; the task the hub answered with. */
    private static Task send(String token, Message message) throws Exception {
        AtomicReference<Task> answered = new AtomicReference<>();
        Client client = client(false, true, List.of((event, c) -> {
            if (event instanceof TaskEvent t) {
                answered.set(t.getTask());
            }
        }));
        client.sendMessage(message, as(token));
        assertNotNull(answered.get(), "no task came back");
        return answered.get();
    }

    private static void event(String taskId, Object body) {
        HubFixture.Resp r = hub.post(worker, "/v1/tasks/" + taskId + "/events", body);
        assertEquals(200, r.status(), () -> "task event refused: " + r);
    }

    @Test
    void theCardTheClientReadsNamesTheNodeAndItsJsonRpcEndpoint() {
        assertEquals("worker", card.name());
        assertEquals(hub.url() + "/a2a/worker", card.url());
        assertEquals("JSONRPC", card.preferredTransport());
        assertTrue(card.capabilities().streaming());
        assertTrue(card.capabilities().pushNotifications());
        assertEquals("https://parley.dev/ext/node-kind/v1", card.capabilities().extensions().getFirst().uri());
        assertEquals("external", card.capabilities().extensions().getFirst().params().get("kind"));
        assertTrue(card.securitySchemes().containsKey("parleyBearer"));
        assertFalse(card.skills().isEmpty());
    }

    @Test
    void aSentMessageBecomesAParleyTaskForTheAgentWithItsPartsAsInput() throws Exception {
        Message message = new Message.Builder().role(Message.Role.USER).messageId(UUID.randomUUID().toString())
                .parts(List.<Part<?>>of(new TextPart("run the tests"), new DataPart(Map.of("suite", "core")),
                        new FilePart(new FileWithUri("text/plain", "log.txt", "https://example.org/log.txt"))))
                .build();
        Task task = send(lead, message);
        assertEquals(TaskState.SUBMITTED, task.getStatus().state());
        assertNotNull(task.getContextId());

        HubFixture.Resp parley = hub.get(lead, "/v1/tasks/" + task.getId());
        assertEquals(200, parley.status(), parley::toString);
        assertEquals("lead", parley.text("creator"));
        assertEquals("worker", parley.text("assignee"));
        assertEquals("submitted", parley.text("state"));
        JsonNode input = parley.get("input");
        assertEquals("run the tests", input.get("text").asText());
        assertEquals("core", input.get("data").get("suite").asText());
        assertEquals("https://example.org/log.txt", input.get("files").get(0).get("url").asText());
        assertEquals(message.getMessageId(), input.get("a2a").get("messageId").asText());

        List<JsonNode> handed = hub.inbox(worker).stream().filter(e -> e.get("kind").asText().equals("task")
                && e.get("corrId").asText().equals(task.getId())).toList();
        assertEquals(1, handed.size(), "the assignee receives the task once");
    }

    @Test
    void theSameMessageIdTwiceIsOneTask() throws Exception {
        Message message = message("only once");
        Task first = send(lead, message);
        Task again = send(lead, message);
        assertEquals(first.getId(), again.getId());
        long handed = hub.inbox(worker).stream().filter(e -> e.get("kind").asText().equals("task")
                && e.get("corrId").asText().equals(first.getId())).count();
        assertEquals(1, handed, "a repeated messageId must not hand the task over twice");
    }

    @Test
    void getTaskFollowsTheAssigneeThroughToCompletionWithArtifacts() throws Exception {
        Task task = send(lead, message("build it"));
        event(task.getId(), obj("type", "accept", "etaSeconds", 5));
        Client client = client(false, true, List.of());
        assertEquals(TaskState.WORKING, client.getTask(new TaskQueryParams(task.getId()), as(lead)).getStatus().state());
        event(task.getId(), obj("type", "complete", "result", Map.of("passed", 42),
                "artifacts", List.of(Map.of("uri", "https://example.org/report.html", "mediaType", "text/html"))));
        Task done = client.getTask(new TaskQueryParams(task.getId(), 10), as(lead));
        assertEquals(TaskState.COMPLETED, done.getStatus().state());
        assertEquals(2, done.getArtifacts().size());
        assertEquals("result", done.getArtifacts().get(0).artifactId());
        assertEquals(42, ((DataPart) done.getArtifacts().get(0).parts().getFirst()).getData().get("passed"));
        FilePart report = (FilePart) done.getArtifacts().get(1).parts().getFirst();
        assertEquals("https://example.org/report.html", ((FileWithUri) report.getFile()).uri());
        assertEquals(1, done.getHistory().size(), "the creating message is the history");
    }

    @Test
    void aStreamedMessageEmitsTheTaskThenEveryChangeInOrderUntilItEnds() throws Exception {
        List<ClientEvent> events = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> ended = new CompletableFuture<>();
        CompletableFuture<String> taskId = new CompletableFuture<>();
        Client client = client(true, false, List.of((event, c) -> {
            events.add(event);
            if (event instanceof TaskEvent t) {
                taskId.complete(t.getTask().getId());
            }
            if (event instanceof TaskUpdateEvent u && u.getUpdateEvent() instanceof TaskStatusUpdateEvent s && s.isFinal()) {
                ended.complete(null);
            }
        }));
        client.sendMessage(message("stream it"), as(lead));
        String id = taskId.get(10, TimeUnit.SECONDS);
        event(id, obj("type", "accept"));
        event(id, obj("type", "update", "progress", Map.of("percent", 50)));
        event(id, obj("type", "complete", "result", "all green"));
        ended.get(10, TimeUnit.SECONDS);

        List<String> seen = new ArrayList<>();
        for (ClientEvent e : events) {
            if (e instanceof TaskEvent t) {
                seen.add("task:" + t.getTask().getStatus().state().asString());
            } else if (e instanceof TaskUpdateEvent u && u.getUpdateEvent() instanceof TaskStatusUpdateEvent s) {
                seen.add("status:" + s.getStatus().state().asString());
            } else if (e instanceof TaskUpdateEvent u && u.getUpdateEvent() instanceof TaskArtifactUpdateEvent a) {
                seen.add("artifact:" + a.getArtifact().artifactId());
            }
        }
        assertEquals(List.of("task:submitted", "status:working", "status:working", "artifact:result",
                "status:completed"), seen);
    }

    @Test
    void resubscribingFollowsARunningTaskAndTheCancelOfItsCreator() throws Exception {
        Task task = send(lead, message("long job"));
        event(task.getId(), obj("type", "accept"));
        List<String> states = new CopyOnWriteArrayList<>();
        CountDownLatch ended = new CountDownLatch(1);
        Client streaming = client(true, false, List.of((event, c) -> {
            if (event instanceof TaskEvent t) {
                states.add(t.getTask().getStatus().state().asString());
            } else if (event instanceof TaskUpdateEvent u && u.getUpdateEvent() instanceof TaskStatusUpdateEvent s) {
                states.add(s.getStatus().state().asString());
                if (s.isFinal()) {
                    ended.countDown();
                }
            }
        }));
        streaming.resubscribe(new TaskIdParams(task.getId()), as(lead));
        await().atMost(Duration.ofSeconds(10)).until(() -> !states.isEmpty());
        Task canceled = client(false, true, List.of()).cancelTask(new TaskIdParams(task.getId()), as(lead));
        assertEquals(TaskState.CANCELED, canceled.getStatus().state());
        assertTrue(ended.await(10, TimeUnit.SECONDS), "the stream ends with the cancel");
        assertEquals(List.of("working", "canceled"), states);
        assertEquals("canceled", hub.get(lead, "/v1/tasks/" + task.getId()).text("state"));
        assertTrue(hub.inbox(worker).stream().anyMatch(e -> e.get("kind").asText().equals("task_canceled")
                && e.get("corrId").asText().equals(task.getId())), "the assignee is told of the cancel");
    }

    @Test
    void aFinishedTaskCannotBeCanceledAndUnknownTasksAreNotFound() throws Exception {
        Task task = send(lead, message("quick"));
        event(task.getId(), obj("type", "accept"));
        event(task.getId(), obj("type", "complete"));
        Client client = client(false, true, List.of());
        A2AClientException refused = assertThrows(A2AClientException.class,
                () -> client.cancelTask(new TaskIdParams(task.getId()), as(lead)));
        assertEquals(-32002, code(refused), refused::toString);
        A2AClientException unknown = assertThrows(A2AClientException.class,
                () -> client.getTask(new TaskQueryParams("no-such-task"), as(lead)));
        assertEquals(-32001, code(unknown), unknown::toString);
        // a task is visible only to its parties, and to others it does not exist
        A2AClientException hidden = assertThrows(A2AClientException.class,
                () -> client.getTask(new TaskQueryParams(task.getId()), as(stranger)));
        assertEquals(-32001, code(hidden), hidden::toString);
    }

    private static int code(A2AClientException e) {
        assertTrue(e.getCause() instanceof io.a2a.spec.JSONRPCError, () -> "not a JSON-RPC error: " + e);
        return ((io.a2a.spec.JSONRPCError) e.getCause()).getCode();
    }

    @Test
    void theAclDecidesWhoMayTaskTheAgent() throws Exception {
        Client client = client(false, true, List.of());
        A2AClientException denied = assertThrows(A2AClientException.class,
                () -> client.sendMessage(message("let me in"), as(stranger)));
        assertTrue(denied.getMessage().contains("acl"), denied::getMessage);
        assertEquals(-32000, code(denied), denied::toString);
        HubFixture.Resp audit = hub.get(hub.admin(), "/v1/audit?node=stranger&decision=deny&limit=10");
        assertTrue(audit.body().contains("worker"), () -> "the denial is audited: " + audit);
    }

    @Test
    void aBlockingSendWaitsForTheAssigneeToFinish() throws Exception {
        AtomicReference<Task> answered = new AtomicReference<>();
        Client blocking = client(false, false, List.of((event, c) -> {
            if (event instanceof TaskEvent t) {
                answered.set(t.getTask());
            }
        }));
        Message message = message("wait for me");
        CompletableFuture<Void> call = CompletableFuture.runAsync(() -> {
            try {
                blocking.sendMessage(message, as(lead));
            } catch (A2AClientException e) {
                throw new IllegalStateException(e);
            }
        });
        String id = await().atMost(Duration.ofSeconds(10)).until(() -> hub.inbox(worker).stream()
                .filter(e -> e.get("kind").asText().equals("task")
                        && e.get("data").get("input").get("a2a").get("messageId").asText().equals(message.getMessageId()))
                .map(e -> e.get("corrId").asText()).findFirst().orElse(null), java.util.Objects::nonNull);
        event(id, obj("type", "accept"));
        event(id, obj("type", "complete", "result", "done"));
        call.get(20, TimeUnit.SECONDS);
        assertEquals(TaskState.COMPLETED, answered.get().getStatus().state());
    }

    private static List<String> pushedStates(List<String[]> hits) throws Exception {
        List<String> states = new ArrayList<>();
        for (String[] hit : hits) {
            states.add(HubFixture.JSON.readTree(hit[1]).get("status").get("state").asText());
        }
        return states;
    }

    @Test
    void pushConfigsDeliverTheTaskToTheWebhookWithItsToken() throws Exception {
        List<String[]> hits = new CopyOnWriteArrayList<>();
        HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        receiver.createContext("/push", exchange -> {
            hits.add(new String[]{exchange.getRequestHeaders().getFirst("X-A2A-Notification-Token"),
                    new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8),
                    exchange.getRequestHeaders().getFirst("Parley-Signature")});
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        receiver.start();
        try {
            Task task = send(lead, message("notify me"));
            Client client = client(false, true, List.of());
            String url = "http://127.0.0.1:" + receiver.getAddress().getPort() + "/push";
            TaskPushNotificationConfig set = client.setTaskPushNotificationConfiguration(new TaskPushNotificationConfig(
                    task.getId(), new PushNotificationConfig(url, "token-of-the-lead-0001", null, "cfg-1")), as(lead));
            assertEquals("cfg-1", set.pushNotificationConfig().id());
            assertEquals(1, client.listTaskPushNotificationConfigurations(
                    new io.a2a.spec.ListTaskPushNotificationConfigParams(task.getId()), as(lead)).size());
            event(task.getId(), obj("type", "accept"));
            event(task.getId(), obj("type", "complete", "result", "pushed"));
            // Pushes are at least once and unordered (concurrent dispatch; the A2A specification
            // orders stream events only): each carries the whole task, so the receiver keeps the
            // newest state. Await both changes as a set, never in arrival order.
            await().atMost(Duration.ofSeconds(10)).until(() -> pushedStates(hits).containsAll(
                    List.of("working", "completed")));
            for (String[] hit : hits) {
                assertEquals("token-of-the-lead-0001", hit[0], "every push carries the config's token");
                assertTrue(hit[2].startsWith("sha256="), "pushes are signed");
                JsonNode pushed = HubFixture.JSON.readTree(hit[1]);
                assertEquals("task", pushed.get("kind").asText());
                assertEquals(task.getId(), pushed.get("id").asText());
            }
            client.deleteTaskPushNotificationConfigurations(new io.a2a.spec.DeleteTaskPushNotificationConfigParams(
                    task.getId(), "cfg-1"), as(lead));
            assertEquals(0, client.listTaskPushNotificationConfigurations(
                    new io.a2a.spec.ListTaskPushNotificationConfigParams(task.getId()), as(lead)).size());
        } finally {
            receiver.stop(0);
        }
    }
}
