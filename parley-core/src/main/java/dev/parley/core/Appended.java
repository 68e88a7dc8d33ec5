package dev.parley.core;

/** The store's answer to an append: the committed envelope, or the first one with the same messageId. */
public record Appended(Envelope envelope, boolean duplicate) {
}
