package dev.parley.core;

import java.util.List;

/** The durable side of a publication: many envelopes, one transaction. */
public interface FanoutStore {

    /**
     * Appends every envelope to its inbox (each gets the next seq of that inbox) and writes
     * every audit entry, all in one transaction; streams hear of the envelopes after the
     * commit. Returns the envelopes with their seqs, in the order given.
     */
    List<Envelope> appendAll(List<Envelope> drafts, List<AuditEntry> audits);
}
