package dev.parley.core;

import java.time.Instant;

/** A node's standing interest in a topic: it receives the topic's events its ACL lets through. */
public record Subscription(TopicName topic, NodeId node, Instant createdAt) {
}
