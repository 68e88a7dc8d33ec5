package dev.parley.core;

/** What became of one send of a batch: committed (or answered as a duplicate), or refused by itself. */
public sealed interface SendOutcome {

    /** The store's answer: the committed envelope, or the first one with the same messageId. */
    record Sent(Appended appended) implements SendOutcome {
    }

    /** Refused before anything of it was written (its refusal is audited where a single send's is). */
    record Refused(ParleyException refusal) implements SendOutcome {
    }
}
