package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The operator's dead-letter queue: what could not be delivered, inspected, redriven (a fresh
 * attempt cycle under the same envelope id) or dropped. Only the admin manages it; every
 * redrive and drop is audited under the policy version in force.
 */
public final class DeadLetters {
    private final DeliveryStore store;
    private final PolicyRules rules;
    private final InstantSource clock;
    private final Consumer<Envelope> redriven;

    /**
     * @param redriven told of every redriven envelope once it is committed, so that delivery
     *                 picks it up: pushed again, or replayed to the node's next stream
     */
    public DeadLetters(DeliveryStore store, PolicyRules rules, InstantSource clock,
                       Consumer<Envelope> redriven) {
        this.store = store;
        this.rules = rules;
        this.clock = clock;
        this.redriven = redriven;
    }

    /** The newest dead letters first, of one node or of all. */
    public List<DeadLetter> list(Principal caller, Optional<NodeId> node, int limit) {
        operator(caller);
        return store.deadLetters(node, limit);
    }

    public DeadLetter show(Principal caller, String envelopeId) {
        operator(caller);
        return store.deadLetter(envelopeId).orElseThrow(() -> new ParleyException(ErrorCode.DEAD_LETTER_NOT_FOUND,
                "no dead letter " + envelopeId));
    }

    /** Takes the envelope out of the queue at attempt 1 and hands it to delivery; returns it so. */
    public Envelope redrive(Principal caller, String envelopeId) {
        Instant at = clock.instant();
        Envelope envelope = store.redrive(envelopeId, at, audit(operator(caller), "dead_letter.redrive", envelopeId, at));
        redriven.accept(envelope);
        return envelope;
    }

    /** Removes the envelope from the queue; it keeps its history. */
    public void drop(Principal caller, String envelopeId) {
        Instant at = clock.instant();
        store.drop(envelopeId, at, audit(operator(caller), "dead_letter.drop", envelopeId, at));
    }

    private AuditEntry audit(Principal caller, String action, String envelopeId, Instant at) {
        return Actor.of(caller, action, at).allow(envelopeId, action, Optional.of(envelopeId), rules.version(),
                Optional.empty());
    }

    private static Principal operator(Principal caller) {
        if (!(caller instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may manage dead letters");
        }
        return caller;
    }
}
