package dev.parley.core;

import java.time.InstantSource;
import java.util.Optional;

/** What happens to an envelope after it is sent: the receiver's acks, and who may look at it. */
public final class Messages {
    private final EventStore store;
    private final PolicyRules rules;
    private final InstantSource clock;

    public Messages(EventStore store, PolicyRules rules, InstantSource clock) {
        this.store = store;
        this.rules = rules;
        this.clock = clock;
    }

    /** The envelope with its state and timeline, for its sender, its receiver or the admin. */
    public MessageRecord status(Principal caller, String id) {
        return visible(store, caller, id);
    }

    /** The receiver reports the outcome of its turn; the state machine decides whether it counts. */
    public DeliveryState ack(Principal caller, String id, DeliveryEvent event) {
        receiver(store, caller, id, "ack");
        String reason = event instanceof DeliveryEvent.Failed f ? f.reason() : "processed";
        AuditEntry audit = new AuditEntry(clock.instant(), caller.name(), "ack", id, AuditEntry.Decision.ALLOW, reason,
                Optional.of(id), rules.version());
        return switch (store.apply(id, event, clock.instant(), audit)) {
            case Transition.Moved moved -> moved.to();
            case Transition.Unchanged unchanged -> unchanged.from();
            case Transition.Refused refused -> throw new ParleyException(ErrorCode.INVALID_TRANSITION, refused.reason());
        };
    }

    /**
     * The envelope, if {@code caller} is its sender, its receiver or the admin. To anyone else
     * it answers exactly like an id that names nothing, so that no one learns which messages
     * of others exist; what a party may not do (the sender acking) is refused with 403.
     */
    static MessageRecord visible(EventStore store, Principal caller, String id) {
        MessageRecord record = store.message(id).orElseThrow(() -> notFound(id));
        if (!visibleTo(caller, record.envelope())) {
            throw notFound(id);
        }
        return record;
    }

    /** Whether {@code caller} may see {@code envelope}: its sender, its receiver or the admin. */
    public static boolean visibleTo(Principal caller, Envelope envelope) {
        return switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller c -> c.id().equals(envelope.from()) || c.id().equals(envelope.to());
        };
    }

    /** The envelope's receiver, when {@code caller} is it; 403 for its sender, 404 for anyone else. */
    static NodeId receiver(EventStore store, Principal caller, String id, String what) {
        MessageRecord record = visible(store, caller, id);
        if (!(caller instanceof Principal.Caller c) || !c.id().equals(record.envelope().to())) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the receiver may " + what + " " + id);
        }
        return c.id();
    }

    static ParleyException notFound(String id) {
        return new ParleyException(ErrorCode.MESSAGE_NOT_FOUND, "message " + id + " does not exist");
    }
}
