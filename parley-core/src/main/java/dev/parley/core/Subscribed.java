package dev.parley.core;

/** A subscription as stored, and whether the call that returned it created it. */
public record Subscribed(Subscription subscription, boolean created) {
}
