package dev.parley.core;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * How this gateway stands in its federation, for health and metrics: whether NATS is in
 * reach ({@code connected}) or envelopes for other gateways spool locally, how many records
 * are owed to other gateways, the ingest cursor per source, counts of inbound records
 * refused or unreadable, of state room entries skipped and of node ownership moves applied
 * here, and every gateway seen in
 * presence since this one started (itself included), by id.
 */
public record FederationStatus(String gateway, boolean connected, long spoolDepth, Map<String, Long> cursors,
                               long refused, long unreadable, long stateSkipped, long ownershipMoves,
                               List<Peer> peers) {
    public FederationStatus {
        cursors = Map.copyOf(cursors);
        peers = List.copyOf(peers);
    }

    /**
     * A gateway's last presence beat: the Parley version it runs, when it beat, and whether
     * that is recent enough for it to count as present (its presence entry has not expired).
     */
    public record Peer(String gateway, String version, Instant lastSeen, boolean present) {
    }

    /** {@code connected} or {@code spooling}. */
    public String mode() {
        return connected ? "connected" : "spooling";
    }
}
