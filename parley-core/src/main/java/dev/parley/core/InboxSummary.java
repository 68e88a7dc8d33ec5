package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * Where one inbox stands: its highest seq, how many envelopes were never delivered, and when
 * the newest delivered one was delivered.
 */
public record InboxSummary(NodeId node, long head, long backlog, Optional<Instant> lastDelivered) {
}
