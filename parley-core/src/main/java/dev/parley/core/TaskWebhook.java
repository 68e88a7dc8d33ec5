package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * A webhook that follows one task: each change of the task is pushed to {@code url}. The
 * pushes travel as envelopes from {@code owner} to {@code relay}, an address that exists
 * only to carry this webhook's delivery policy, so they are scheduled, retried, signed and
 * dead-lettered like any push. {@code format} names how a push body is written; {@code token}
 * and the authentication scheme and credentials are sent with each push.
 */
public record TaskWebhook(String taskId, String id, NodeId owner, NodeId relay, String url, Optional<String> token,
                          Optional<String> authScheme, Optional<String> authCredentials, String format,
                          Instant createdAt) {
}
