package dev.parley.core;

import java.time.Instant;

/** A dead-lettered envelope: why, after how many attempts, and since when. */
public record DeadLetter(Envelope envelope, String reason, int attempts, Instant at) {
}
