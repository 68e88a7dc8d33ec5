package dev.parley.core;

import java.util.List;

/** An envelope together with its current delivery state and timeline. */
public record MessageRecord(Envelope envelope, DeliveryState state, List<TimelineEntry> timeline) {
    public MessageRecord {
        timeline = List.copyOf(timeline);
    }
}
