/**
 * Federation over NATS JetStream: a hub becomes a gateway that appends only to its own outbox
 * stream, ingests the other gateways' outboxes with per-source cursors, and shares metadata
 * (never payloads) in the state room, a JetStream KV bucket.
 */
package dev.parley.nats;
