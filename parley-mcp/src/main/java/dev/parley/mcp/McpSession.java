package dev.parley.mcp;

import java.time.Instant;

/**
 * One MCP session over HTTP: created by {@code initialize}, named by the
 * {@code Mcp-Session-Id} header, and bound to the node that opened it — a request that
 * presents the id with another node's credentials does not find it.
 */
public final class McpSession {
    private final String id;
    private final String node;
    private final Instant created;
    private volatile String protocolVersion;
    private volatile boolean initialized;
    private volatile String logLevel = "info";
    private volatile Instant lastUsed;

    public McpSession(String id, String node, Instant created) {
        this.id = id;
        this.node = node;
        this.created = created;
        this.lastUsed = created;
    }

    public String id() {
        return id;
    }

    public String node() {
        return node;
    }

    public Instant created() {
        return created;
    }

    public String protocolVersion() {
        return protocolVersion;
    }

    void protocolVersion(String version) {
        this.protocolVersion = version;
    }

    public boolean initialized() {
        return initialized;
    }

    void initialized(boolean value) {
        this.initialized = value;
    }

    public String logLevel() {
        return logLevel;
    }

    void logLevel(String level) {
        this.logLevel = level;
    }

    public Instant lastUsed() {
        return lastUsed;
    }

    public void touch(Instant now) {
        this.lastUsed = now;
    }
}
