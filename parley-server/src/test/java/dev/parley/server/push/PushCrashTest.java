package dev.parley.server.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.nats.testing.ServerProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A hub killed with SIGKILL in the middle of a backoff schedule resumes it after the restart. */
class PushCrashTest {
    private static final String ADMIN = "pa_crash-test-admin-token";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path dir;
    private Process hub;

    @AfterEach
    void kill() {
        if (hub != null) {
            hub.destroyForcibly();
        }
    }

    @Test
    void sigkillDuringBackoffNeitherLosesNorDoublesAttempts() throws Exception {
        int[] answer = {503};
        try (WebhookReceiver receiver = new WebhookReceiver(n -> answer[0])) {
            int port = ServerProcess.freePort();
            String base = "http://127.0.0.1:" + port;
            Path log = dir.resolve("hub.log");
            hub = start(port, log, base);

            String lead = call(base, "POST", "/v1/nodes", ADMIN, "{\"id\":\"lead\"}").get("token").asText();
            call(base, "POST", "/v1/nodes", ADMIN, "{\"id\":\"worker\",\"parent\":\"lead\"}");
            call(base, "PUT", "/v1/nodes/worker/delivery", ADMIN, "{\"webhook\":{\"url\":\"" + receiver.url()
                    + "\",\"secret\":\"" + WebhookReceiver.SECRET + "\"},\"retry\":{\"maxAttempts\":10,\"baseMs\":1500,\"capMs\":1500}}");
            String id = call(base, "POST", "/v1/messages", lead, "{\"to\":\"worker\",\"text\":\"outlive me\"}").get("id").asText();
            // kill once attempt 2's failure is committed, in its backoff (or, when the jitter drew a
            // short one, with attempt 3 under way: the test cannot choose, it accounts for both)
            await().atMost(Duration.ofSeconds(10)).until(() -> call(base, "GET", "/v1/messages/" + id, ADMIN, null)
                    .get("timeline").toString().contains("attempt 2 failed"));

            hub.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            assertFalse(hub.isAlive());
            assertEquals(137, hub.exitValue(), "killed by SIGKILL");
            answer[0] = 200;

            hub = start(port, log, base);
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    "delivered".equals(call(base, "GET", "/v1/messages/" + id, ADMIN, null).get("state").asText()));
            int lastFailed = WebhookReceiver.lastFailedAttempt(call(base, "GET", "/v1/messages/" + id, ADMIN, null));
            assertTrue(lastFailed >= 2, "the kill came after attempt 2's failure was committed");
            receiver.assertResumedAfter(lastFailed);
            assertTrue(receiver.hits().stream().allMatch(h -> h.eventId().equals(id)), receiver.hits()::toString);
        }
    }

    private Process start(int port, Path log, String base) throws IOException {
        long from = ServerProcess.logSize(log);
        Process process = HubProcess.spawn(dir.resolve("data"), port, ADMIN, log);
        // its own line: whatever answers on the port may be another server that took it first
        ServerProcess.awaitAnnounced(process, log, from, "listening on " + base + " ", HubProcess.STARTUP);
        return process;
    }

    private static JsonNode call(String base, String method, String path, String token, String body) {
        try {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                    .header("Authorization", "Bearer " + token)
                    .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
            HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
            assertTrue(response.statusCode() < 300, method + " " + path + " -> " + response.statusCode() + " " + response.body());
            return dev.parley.server.it.HubFixture.JSON.readTree(response.body());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
