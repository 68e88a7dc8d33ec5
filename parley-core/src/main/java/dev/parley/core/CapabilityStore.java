package dev.parley.core;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Capabilities, the tasks routed through them, and the reviews their misfires raised. */
public interface CapabilityStore {
    /** A capability as stored: withdrawn ones keep their row (their reviews name them), with when. */
    record Stored(Capability capability, Optional<Instant> unpublishedAt) {
        public boolean published() {
            return unpublishedAt.isEmpty();
        }
    }

    /** A task that came through a capability: to which owner, and when it is due. */
    record Routed(String taskId, String capabilityId, NodeId owner, Instant dueAt) {
    }

    /**
     * Publishes {@code capability} (again, replacing what it declared before) with its audit
     * entry; refuses ({@code capability_taken}), writing nothing, while another owner publishes it.
     */
    void publish(Capability capability, AuditEntry audit);

    /** Withdraws it: tasks no longer route to it. */
    void unpublish(String id, Instant at, AuditEntry audit);

    Optional<Stored> capability(String id);

    /** The published capabilities, by id. */
    List<Capability> published();

    /** How task {@code taskId} was routed, if it came through a capability. */
    Optional<Routed> routed(String taskId);

    /** Moves a routed task's due time (its assignee accepted it with an ETA of its own). */
    void due(String taskId, Instant at);

    /** Routed tasks not ended, due before {@code now} and not yet reviewed for it, the longest overdue first. */
    List<Routed> overdue(Instant now, int limit);

    /**
     * Stores {@code review}, sends {@code notice} (to the owner) and writes {@code audit}, in one
     * transaction; with {@code overdue}, marks that task reviewed for its ETA, so it is raised once.
     */
    void raise(SkillReview review, Envelope notice, AuditEntry audit, Optional<String> overdue);

    /** The reviews raised for capability {@code id}, newest first. */
    List<SkillReview> reviews(String id, int limit);
}
