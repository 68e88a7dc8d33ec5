package dev.parley.core;

/**
 * Who reads an inbox. Only the node itself takes delivery: what its stream writes or its
 * poll returns is marked delivered, and redeliveries go to its streams. Anyone else allowed
 * to look (the admin) only looks, so a node's cursor-less stream still replays what others
 * have seen.
 */
public enum InboxReader {
    /** The node reading its own inbox. */
    OWNER,
    /** Someone else reading it (the admin); reading changes nothing. */
    OBSERVER;

    public boolean takesDelivery() {
        return this == OWNER;
    }
}
