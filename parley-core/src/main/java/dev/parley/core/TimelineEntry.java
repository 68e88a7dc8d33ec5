package dev.parley.core;

import java.time.Instant;

/** One timestamped step in an envelope's history. */
public record TimelineEntry(DeliveryState state, Instant at, String detail) {
}
