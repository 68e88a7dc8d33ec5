package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * An envelope its receiver said it is working on (the agent protocol's claim), as the store
 * keeps it: when it was claimed, how often its claims were taken back before ({@code tries}),
 * the timeout the claimant last declared for its work, and its last heartbeat.
 */
public record Claim(String envelopeId, NodeId node, Instant claimedAt, int tries, Optional<Duration> declared,
                    Optional<Heartbeat> heartbeat) {

    /** The last time the claimant showed it was at work on it: its claim, or its last heartbeat. */
    public Instant lastSign() {
        return heartbeat.map(Heartbeat::at).filter(at -> at.isAfter(claimedAt)).orElse(claimedAt);
    }

    /** What the claimant last said about its work: the tool it runs and since when. */
    public record Heartbeat(Instant at, Optional<String> tool, Optional<Instant> toolStartedAt) {
    }
}
