package dev.parley.nats;

import dev.parley.core.OwnerAckPolicy;
import dev.parley.nats.auth.GatewayId;
import dev.parley.nats.auth.GatewayPermissions;

import java.nio.file.Path;
import java.util.Optional;

/**
 * How a hub joins a federation: its gateway id, the NATS URL (or a comma-separated list of
 * the servers of a NATS cluster), the NATS credentials file (a user JWT and nkey seed, minted
 * for this gateway id) it connects with, and how many replicas its outbox stream and the
 * state room buckets get (1 on one nats-server; 3 on a cluster of three, so that losing one
 * server loses nothing), and how long it waits for the owner of a target to confirm an
 * envelope before publishing it again ({@link OwnerAckPolicy}). Without credentials the outboxes are not protected by NATS
 * (development mode).
 */
public record GatewayConfig(String id, String url, Optional<Path> credentials, int replicas,
                            OwnerAckPolicy ownerAck) {
    /** JetStream's own limit on the replicas of a stream. */
    public static final int MAX_REPLICAS = 5;

    public GatewayConfig {
        new GatewayId(id); // refuses an id that cannot name a stream and a subject token
        if (replicas < 1 || replicas > MAX_REPLICAS) {
            throw new IllegalArgumentException("replicas must be 1 to " + MAX_REPLICAS + " (JetStream's limit), not "
                    + replicas);
        }
    }

    public GatewayConfig(String id, String url, Optional<Path> credentials, int replicas) {
        this(id, url, credentials, replicas, OwnerAckPolicy.DEFAULT);
    }

    /** On one nats-server: one replica. */
    public GatewayConfig(String id, String url, Optional<Path> credentials) {
        this(id, url, credentials, 1);
    }

    public GatewayConfig withOwnerAck(OwnerAckPolicy policy) {
        return new GatewayConfig(id, url, credentials, replicas, policy);
    }

    /** The JetStream stream this gateway alone appends to. */
    public String outboxStream() {
        return outboxStream(id);
    }

    /** The inbox prefix its connection uses: the only subjects its credentials may subscribe to. */
    String inboxPrefix() {
        return GatewayPermissions.inboxPrefix(new GatewayId(id));
    }

    static String outboxStream(String gateway) {
        return GatewayPermissions.outboxStream(new GatewayId(gateway));
    }

    /** The subject of what {@code from} routes to {@code to}. */
    static String subject(String from, String to) {
        return GatewayPermissions.OUTBOX_SUBJECT_PREFIX + from + "." + to;
    }
}
