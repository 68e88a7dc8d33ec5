package dev.parley.server.mcp;

import dev.parley.mcp.McpSession;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * The open MCP-over-HTTP sessions: ids from a secure random source, each bound to the node
 * that opened it, forgotten after an idle hour, and bounded in number (the least recently
 * used goes first), so clients that never say goodbye cannot grow the hub's memory.
 */
public final class McpSessions {
    private static final Logger LOG = Logger.getLogger(McpSessions.class.getName());
    static final Duration IDLE = Duration.ofHours(1);
    static final int MAX = 10_000;

    private final SecureRandom random = new SecureRandom();
    private final Map<String, McpSession> open = new ConcurrentHashMap<>();

    McpSession create(String node, Instant now) {
        expire(now);
        while (open.size() >= MAX) {
            open.values().stream().min(Comparator.comparing(McpSession::lastUsed))
                    .filter(oldest -> open.remove(oldest.id(), oldest))
                    .ifPresent(oldest -> LOG.warning("ended the MCP session of " + oldest.node() + " unclosed: "
                            + MAX + " sessions were open, and it was the least recently used"));
        }
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        McpSession session = new McpSession(HexFormat.of().formatHex(bytes), node, now);
        open.put(session.id(), session);
        return session;
    }

    /** The session {@code id} of {@code node}, if it is open; the other node's sessions do not exist for it. */
    Optional<McpSession> find(String id, String node, Instant now) {
        McpSession session = open.get(id);
        if (session == null || !session.node().equals(node)) {
            return Optional.empty();
        }
        if (session.lastUsed().plus(IDLE).isBefore(now)) {
            if (open.remove(id, session)) {
                expired(session);
            }
            return Optional.empty();
        }
        session.touch(now);
        return Optional.of(session);
    }

    boolean close(String id, String node) {
        McpSession session = open.get(id);
        return session != null && session.node().equals(node) && open.remove(id, session);
    }

    private void expire(Instant now) {
        for (McpSession session : open.values()) {
            if (session.lastUsed().plus(IDLE).isBefore(now) && open.remove(session.id(), session)) {
                expired(session);
            }
        }
    }

    /** A session its client never closed (no DELETE): the client may have died, or just left. */
    private static void expired(McpSession session) {
        LOG.info("the MCP session of " + session.node() + " ended unclosed: idle since " + session.lastUsed());
    }
}
