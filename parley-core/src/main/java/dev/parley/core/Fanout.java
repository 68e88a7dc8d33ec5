package dev.parley.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Writes one publication (a topic event or a broadcast) to every recipient the caller
 * decided on: one envelope per inbox, all correlated to the publication id, with an audit
 * entry per recipient and one for the publication itself, in a single transaction.
 */
final class Fanout {

    /** An inbox the publication goes to, the access decision that lets it, and why, as the audit log says it. */
    record Recipient(NodeId id, AclDecision.Allowed decision, String why) {
        static Recipient of(NodeId id, AclDecision.Allowed decision) {
            return new Recipient(id, decision, decision.why());
        }
    }

    private final FanoutStore store;
    private final IdGenerator ids;

    Fanout(FanoutStore store, IdGenerator ids) {
        this.store = store;
        this.ids = ids;
    }

    /**
     * @param target        what the publication was addressed to, as the audit log shows it
     *                      ({@code topic:<name>}, {@code broadcast})
     * @param refusals      deny entries for those the caller decided may not receive it; they
     *                      are written in the same transaction
     * @param policyVersion the version every decision of this publication was taken under
     */
    Publication publish(Actor actor, String target, Draft draft, List<Recipient> recipients, List<AuditEntry> refusals,
                        String policyVersion) {
        String id = ids.next();
        Draft correlated = draft.correlated(id);
        List<Envelope> envelopes = new ArrayList<>(recipients.size());
        List<AuditEntry> audits = new ArrayList<>(refusals);
        for (Recipient recipient : recipients) {
            AclDecision.Allowed allowed = recipient.decision();
            Envelope envelope = correlated.to(ids.next(), recipient.id(), actor.at(), allowed.policyVersion(),
                    allowed.rule());
            envelopes.add(envelope);
            audits.add(actor.allow(recipient.id().value(), recipient.why() + " (publication " + id + ")",
                    Optional.of(envelope.id()), allowed.policyVersion(), allowed.rule()));
        }
        audits.add(actor.allow(target, "publication " + id + " to " + recipients.size() + " inbox(es), "
                + refusals.size() + " refused", Optional.empty(), policyVersion, Optional.empty()));
        store.appendAll(envelopes, audits);
        return new Publication(id, envelopes.size());
    }
}
