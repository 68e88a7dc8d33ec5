package dev.parley.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * How a hub is run. {@link #defaults(Path)} gives the documented defaults.
 *
 * @param dataDir            where {@code parley.db} and {@code admin.token} live
 * @param host               listen address (default 127.0.0.1)
 * @param port               listen port (default 7420; 0 picks a free one)
 * @param maxDepth           how deep lineage may go (default 1: a child may not spawn)
 * @param adminToken         an admin token that overrides the stored one (PARLEY_ADMIN_TOKEN)
 * @param heartbeat          SSE heartbeat interval (default 15 s)
 * @param slowReaderTimeout  a stream whose write is stuck this long is disconnected (default 30 s)
 * @param maxBodyBytes       request body limit (default 256 KiB)
 * @param pushTimeout        connect and answer timeout of one webhook push (default 10 s)
 */
public record HubConfig(Path dataDir, String host, int port, int maxDepth, Optional<String> adminToken,
                        Duration heartbeat, Duration slowReaderTimeout, long maxBodyBytes, Duration pushTimeout) {
    public static final int DEFAULT_PORT = 7420;
    public static final String DEFAULT_HOST = "127.0.0.1";

    public static HubConfig defaults(Path dataDir) {
        return new HubConfig(dataDir, DEFAULT_HOST, DEFAULT_PORT, 1, Optional.empty(), Duration.ofSeconds(15),
                Duration.ofSeconds(30), 256 * 1024, Duration.ofSeconds(10));
    }

    public HubConfig withPort(int newPort) {
        return new HubConfig(dataDir, host, newPort, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes, pushTimeout);
    }

    public HubConfig withHost(String newHost) {
        return new HubConfig(dataDir, newHost, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes, pushTimeout);
    }

    public HubConfig withMaxDepth(int depth) {
        return new HubConfig(dataDir, host, port, depth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes, pushTimeout);
    }

    public HubConfig withAdminToken(Optional<String> token) {
        return new HubConfig(dataDir, host, port, maxDepth, token, heartbeat, slowReaderTimeout, maxBodyBytes, pushTimeout);
    }

    public HubConfig withHeartbeat(Duration interval) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, interval, slowReaderTimeout, maxBodyBytes, pushTimeout);
    }

    public HubConfig withSlowReaderTimeout(Duration timeout) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, timeout, maxBodyBytes, pushTimeout);
    }

    public HubConfig withPushTimeout(Duration timeout) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes, timeout);
    }
}
