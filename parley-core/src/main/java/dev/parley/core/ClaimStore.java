package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The claims of the agent protocol, kept beside the envelopes they are on. */
public interface ClaimStore {
    /**
     * Claims the envelope for its receiver {@code node} and moves it to {@code processing};
     * the receiver's own claim again keeps it (a declared timeout replaces the one before).
     * Refused while the envelope waits out a taken-back claim's backoff
     * ({@link ErrorCode#CLAIM_BACKOFF}) and when it is settled
     * ({@link ErrorCode#INVALID_TRANSITION}).
     */
    Claim claim(String envelopeId, NodeId node, Optional<Duration> declared, Instant at, AuditEntry audit);

    /** Records a heartbeat of the claimant; {@link ErrorCode#NOT_CLAIMED} when the envelope is not claimed. */
    Claim heartbeat(String envelopeId, Claim.Heartbeat heartbeat, Optional<Duration> declared);

    /** The claim held on {@code envelopeId}, if one is. */
    Optional<Claim> held(String envelopeId);

    /** Every claim held now, oldest first. */
    List<Claim> claims();

    /** Per claimant, its held claim with the most recent heartbeat (claimants with no heartbeat are not in it). */
    Map<NodeId, Claim> lastHeartbeats();

    /**
     * Takes {@code claim} back, unless it changed meanwhile (a heartbeat, an ack): the envelope
     * is pending again, claimable from {@code notBefore}, with one more try counted.
     */
    boolean reset(Claim claim, String why, Instant notBefore, Instant at, AuditEntry audit);

    /**
     * Gives {@code claim} up, unless it changed meanwhile: the envelope is dead-lettered with
     * {@code why} and {@code notice} (if any) tells its sender.
     */
    boolean giveUp(Claim claim, String why, int tries, Instant at, Optional<Envelope> notice, AuditEntry audit);
}
