package dev.parley.server.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.mcp.McpSession;
import dev.parley.server.it.LogCapture;
import java.time.Duration;
import java.time.Instant;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/** An MCP session that ends without its client closing it leaves a line in the log. */
class McpSessionsTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    @Test
    void aSessionLeftIdleForAnHourEndsWithALogLine() {
        McpSessions sessions = new McpSessions();
        try (LogCapture log = LogCapture.of(McpSessions.class.getName())) {
            McpSession idle = sessions.create("idler", T0);
            McpSession used = sessions.create("worker", T0);
            Instant later = T0.plus(McpSessions.IDLE).plusSeconds(1);
            assertTrue(sessions.find(used.id(), "worker", T0.plusSeconds(10)).isPresent());

            assertTrue(sessions.find(idle.id(), "idler", later).isEmpty(), "an idle hour ends the session");
            assertEquals(1, log.messages(Level.INFO, "the MCP session of idler ended unclosed").size(),
                    () -> "" + log.records("MCP session"));
            sessions.create("newcomer", later.plus(Duration.ofSeconds(10)));
            assertEquals(1, log.messages(Level.INFO, "the MCP session of worker ended unclosed").size(),
                    () -> "" + log.records("MCP session"));
        }
    }

    @Test
    void aSessionEvictedForTheCapEndsWithAWarning() {
        McpSessions sessions = new McpSessions();
        try (LogCapture log = LogCapture.of(McpSessions.class.getName())) {
            McpSession oldest = sessions.create("first", T0);
            for (int i = 1; i < McpSessions.MAX; i++) {
                sessions.create("node-" + i, T0.plusMillis(i));
            }
            assertTrue(log.records("MCP session").isEmpty(), "nothing ended yet");
            sessions.create("one-too-many", T0.plusSeconds(60));

            assertEquals(1, log.messages(Level.WARNING, "ended the MCP session of first unclosed").size(),
                    () -> "" + log.records("MCP session"));
            assertTrue(sessions.find(oldest.id(), "first", T0.plusSeconds(61)).isEmpty());
        }
    }
}
