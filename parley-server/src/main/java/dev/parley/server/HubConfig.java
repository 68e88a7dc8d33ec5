package dev.parley.server;

import dev.parley.nats.GatewayConfig;
import dev.parley.trace.export.OtlpSettings;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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
 * @param gate               admission by invite and rate limits (see {@link Gate})
 * @param policy             policy rules and audit retention (see {@link Policy})
 * @param transport          connection timeouts and the per-address connection cap (see {@link Transport})
 * @param gateway            federation over NATS ({@code --gateway}, {@code --nats}); empty: a single-host hub
 * @param sweepInterval      how often the sweep of the agent protocol's claims runs after the first, at start
 *                           (default {@link dev.parley.core.Sweep#INTERVAL}, 60 s)
 */
public record HubConfig(Path dataDir, String host, int port, int maxDepth, Optional<String> adminToken,
                        Duration heartbeat, Duration slowReaderTimeout, long maxBodyBytes, Duration pushTimeout,
                        Gate gate, Policy policy, Transport transport, Optional<GatewayConfig> gateway,
                        Duration sweepInterval, OtlpSettings export) {
    public static final int DEFAULT_PORT = 7420;
    public static final String DEFAULT_HOST = "127.0.0.1";

    public static HubConfig defaults(Path dataDir) {
        return new HubConfig(dataDir, DEFAULT_HOST, DEFAULT_PORT, 1, Optional.empty(), Duration.ofSeconds(15),
                Duration.ofSeconds(30), 256 * 1024, Duration.ofSeconds(10), Gate.DEFAULTS, Policy.DEFAULTS,
                Transport.DEFAULTS, Optional.empty(), dev.parley.core.Sweep.INTERVAL,
                OtlpSettings.fromEnvironment(java.util.Map.of()));
    }

    /** Runs the periodic sweep every {@code interval} (a test that sweeps by itself sets it beyond its own length). */
    public HubConfig withSweepInterval(Duration interval) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes,
                pushTimeout, gate, policy, transport, gateway, interval, export);
    }

    /** Where the hub exports its spans and agent turns (OTLP/HTTP); off unless an endpoint is set. */
    public HubConfig withExport(OtlpSettings settings) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes,
                pushTimeout, gate, policy, transport, gateway, sweepInterval, settings);
    }

    public HubConfig withPort(int newPort) {
        return new HubConfig(dataDir, host, newPort, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes, pushTimeout, gate, policy, transport, gateway, sweepInterval, export);
    }

    public HubConfig withHost(String newHost) {
        return new HubConfig(dataDir, newHost, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes, pushTimeout, gate, policy, transport, gateway, sweepInterval, export);
    }

    public HubConfig withMaxDepth(int depth) {
        return new HubConfig(dataDir, host, port, depth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes, pushTimeout, gate, policy, transport, gateway, sweepInterval, export);
    }

    public HubConfig withAdminToken(Optional<String> token) {
        return new HubConfig(dataDir, host, port, maxDepth, token, heartbeat, slowReaderTimeout, maxBodyBytes, pushTimeout, gate, policy, transport, gateway, sweepInterval, export);
    }

    public HubConfig withHeartbeat(Duration interval) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, interval, slowReaderTimeout, maxBodyBytes, pushTimeout, gate, policy, transport, gateway, sweepInterval, export);
    }

    public HubConfig withSlowReaderTimeout(Duration timeout) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, timeout, maxBodyBytes, pushTimeout, gate, policy, transport, gateway, sweepInterval, export);
    }

    public HubConfig withMaxBodyBytes(long bytes) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, bytes, pushTimeout, gate, policy, transport, gateway, sweepInterval, export);
    }

    public HubConfig withPushTimeout(Duration timeout) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes, timeout, gate, policy, transport, gateway, sweepInterval, export);
    }

    // --- admission by invite and rate limits ---

    /**
     * Who gets in and how fast.
     *
     * @param requireNodeProof   exchanges must prove an Ed25519 key ({@code --require-node-proof}; default off)
     * @param exchangesPerMinute admission requests ({@code /v1/auth/*}) one client address may make a
     *                           minute, per route, all of which may come at once (default 30)
     * @param nodeRate           requests per second each node may make ({@code --rate}; default 200)
     * @param nodeBurst          requests a node may make at once ({@code --burst}; default 400)
     * @param ticketTtl          how long a ticket from an exchange stays redeemable (default 60 s)
     */
    public record Gate(boolean requireNodeProof, int exchangesPerMinute, double nodeRate, long nodeBurst,
                       Duration ticketTtl) {
        public static final Gate DEFAULTS = new Gate(false, 30, 200, 400, Duration.ofSeconds(60));

        public Gate {
            if (exchangesPerMinute < 1) {
                throw new IllegalArgumentException("exchangesPerMinute must be at least 1");
            }
            if (!(nodeRate > 0) || nodeBurst < 1) {
                throw new IllegalArgumentException("the node rate must be above 0 and the burst at least 1");
            }
            if (ticketTtl.compareTo(Duration.ofSeconds(1)) < 0 || ticketTtl.compareTo(Duration.ofMinutes(5)) > 0) {
                throw new IllegalArgumentException("the ticket lifetime must be between 1 s and 5 min");
            }
        }
    }

    public HubConfig withGate(Gate newGate) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes,
                pushTimeout, newGate, policy, transport, gateway, sweepInterval, export);
    }

    public HubConfig withRequireNodeProof(boolean required) {
        return withGate(new Gate(required, gate.exchangesPerMinute(), gate.nodeRate(), gate.nodeBurst(), gate.ticketTtl()));
    }

    public HubConfig withExchangesPerMinute(int perMinute) {
        return withGate(new Gate(gate.requireNodeProof(), perMinute, gate.nodeRate(), gate.nodeBurst(), gate.ticketTtl()));
    }

    /** The default token bucket of every node: {@code rate} requests a second, {@code burst} at once. */
    public HubConfig withNodeRate(double rate, long burst) {
        return withGate(new Gate(gate.requireNodeProof(), gate.exchangesPerMinute(), rate, burst, gate.ticketTtl()));
    }

    public HubConfig withTicketTtl(Duration ttl) {
        return withGate(new Gate(gate.requireNodeProof(), gate.exchangesPerMinute(), gate.nodeRate(), gate.nodeBurst(), ttl));
    }

    // --- policy rules and audit retention ---

    /**
     * The operator's policy around the built-in ACL, and how long the audit log is kept.
     *
     * @param file           a policy rules file, JSON or YAML ({@code --policy FILE}); none: the built-in ACL alone
     * @param reloadInterval how often the file is checked for changes (default 500 ms)
     * @param auditRetention audit entries older than this are pruned (default 30 days)
     */
    public record Policy(Optional<Path> file, Duration reloadInterval, Duration auditRetention) {
        public static final Policy DEFAULTS = new Policy(Optional.empty(), Duration.ofMillis(500), Duration.ofDays(30));

        public Policy {
            if (reloadInterval.toMillis() < 10) {
                throw new IllegalArgumentException("the policy reload interval must be at least 10 ms");
            }
            if (auditRetention.toMillis() < 1) {
                throw new IllegalArgumentException("the audit retention must be positive");
            }
        }
    }

    public HubConfig withPolicyConfig(Policy newPolicy) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes,
                pushTimeout, gate, newPolicy, transport, gateway, sweepInterval, export);
    }

    /** Loads policy rules from {@code file} (JSON or YAML) and reloads them when it changes. */
    public HubConfig withPolicy(Optional<Path> file) {
        return withPolicyConfig(new Policy(file, policy.reloadInterval(), policy.auditRetention()));
    }

    public HubConfig withPolicyReloadInterval(Duration interval) {
        return withPolicyConfig(new Policy(policy.file(), interval, policy.auditRetention()));
    }

    public HubConfig withAuditRetention(Duration retention) {
        return withPolicyConfig(new Policy(policy.file(), policy.reloadInterval(), retention));
    }

    // --- connection timeouts and the per-address cap ---

    /**
     * How long the hub waits on a client, and how many connections one address may hold.
     * A connection past its timeout is closed without an answer.
     *
     * @param idleTimeout              a connection with no request under way (from accept or the end of the
     *                                 last answer until its request line is in) is closed after this
     *                                 ({@code --idle-timeout}; default 60 s)
     * @param headerTimeout            the request headers must be in this long after the request line
     *                                 ({@code --header-timeout}; default 10 s)
     * @param bodyTimeout              the request body must be in this long after the headers
     *                                 ({@code --body-timeout}; default 30 s). An answer being written, such as
     *                                 an SSE stream, is never cut by these timeouts
     * @param maxConnectionsPerAddress connections one client address may hold open at once; the next is
     *                                 refused with 429 {@code too_many_connections}
     *                                 ({@code --max-connections-per-address}; default 512)
     */
    public record Transport(Duration idleTimeout, Duration headerTimeout, Duration bodyTimeout,
                            int maxConnectionsPerAddress) {
        public static final Transport DEFAULTS = new Transport(Duration.ofSeconds(60), Duration.ofSeconds(10),
                Duration.ofSeconds(30), 512);

        public Transport {
            for (Duration timeout : List.of(idleTimeout, headerTimeout, bodyTimeout)) {
                if (timeout.toMillis() < 10) {
                    throw new IllegalArgumentException("connection timeouts must be at least 10 ms");
                }
            }
            if (maxConnectionsPerAddress < 1) {
                throw new IllegalArgumentException("the connections per address must be at least 1");
            }
        }
    }

    public HubConfig withTransport(Transport newTransport) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes,
                pushTimeout, gate, policy, newTransport, gateway, sweepInterval, export);
    }

    /** Runs the hub as gateway {@code config} of a federation over NATS JetStream. */
    public HubConfig withGateway(Optional<GatewayConfig> config) {
        return new HubConfig(dataDir, host, port, maxDepth, adminToken, heartbeat, slowReaderTimeout, maxBodyBytes, pushTimeout, gate, policy, transport, config, sweepInterval, export);
    }
}
