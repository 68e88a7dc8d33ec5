package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.SseClient.Frame;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stream whose delivery marks cannot be committed (the store refuses them, as on a full disk)
 * waits once its inbox's bound of uncommitted marks is reached, and keeps writing its heartbeats
 * meanwhile (API.md: a comment at least every 15 s); once marks commit again it goes on. The
 * fault is a trigger in the hub's real database file that fails every mark's update while on.
 */
class StreamMarksWaitTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int SENT = 1_000;

    @TempDir
    Path dir;
    private HubFixture hub;

    @AfterEach
    void stop() {
        if (hub != null) {
            hub.close();
        }
    }

    @Test
    void aStreamWaitingForItsMarksKeepsItsHeartbeatsAndGoesOnOnceTheyCommit() throws Exception {
        hub = HubFixture.start(dir, c -> HubFixture.unthrottled(c).withHeartbeat(Duration.ofMillis(300)));
        String lead = uid("ml");
        String leadToken = hub.createNode(lead, null);
        String worker = uid("mw");
        String workerToken = hub.createNode(worker, lead);
        Object[] messages = IntStream.range(0, SENT).mapToObj(i -> obj("to", worker, "text", "m" + i)).toArray();
        JsonNode results = assertStatus(200, hub.post(leadToken, "/v1/messages:batch", obj("messages", List.of(messages))))
                .get("results");
        String lastId = results.get(SENT - 1).path("id").asText();

        injectMarkFault();
        fault(true);
        // Polls of the same page fill the inbox's bound of marks waiting for a commit (65,536): 65
        // pages of 1,000 are answered, the 66th is refused, as nothing can be committed.
        for (int poll = 0; poll < 65; poll++) {
            assertStatus(200, hub.get(workerToken, "/v1/inbox?after=0&limit=" + SENT));
        }
        assertError(hub.get(workerToken, "/v1/inbox?after=0&limit=" + SENT), 500, "internal");

        try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream?after=0", workerToken, null)) {
            stream.expectReady(WAIT);
            // Pages of 256: the first two fit the 536 left under the bound, the third's marks wait.
            List<Frame> written = stream.nextEvents(768, WAIT);
            assertEquals(768, written.getLast().seq());
            for (int beat = 0; beat < 3; beat++) {
                Frame frame = stream.next(WAIT);
                assertTrue(frame.isComment(), "only heartbeats while the marks wait: " + frame);
                assertEquals(List.of("hb"), frame.comments());
            }

            fault(false);
            List<Frame> rest = stream.nextEvents(SENT - 768, WAIT);
            assertEquals(SENT, rest.getLast().seq());
        }
        await().atMost(WAIT).until(() -> hub.status(workerToken, lastId).text("state").equals("delivered"));
    }

    /** A trigger that fails every update of a delivery mark while {@code injected_fault.active} is 1. */
    private void injectMarkFault() throws SQLException {
        try (Connection c = database(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE injected_fault (active INTEGER NOT NULL)");
            s.execute("INSERT INTO injected_fault VALUES (0)");
            s.execute("CREATE TRIGGER injected_fault BEFORE UPDATE OF delivered_at ON envelopes"
                    + " WHEN (SELECT active FROM injected_fault) BEGIN SELECT RAISE(ROLLBACK, 'injected I/O failure'); END");
        }
    }

    private void fault(boolean active) throws SQLException {
        try (Connection c = database(); Statement s = c.createStatement()) {
            s.execute("UPDATE injected_fault SET active = " + (active ? 1 : 0));
        }
    }

    private Connection database() throws SQLException {
        Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("parley.db"));
        try (Statement s = c.createStatement()) {
            s.execute("PRAGMA busy_timeout = 10000");
        }
        return c;
    }
}
