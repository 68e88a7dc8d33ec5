package dev.parley.core;

/**
 * One topic event or broadcast as the hub fanned it out: its id (the {@code corrId} of
 * every envelope it produced) and how many inboxes received it.
 */
public record Publication(String id, int delivered) {
}
