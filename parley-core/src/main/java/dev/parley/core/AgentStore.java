package dev.parley.core;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** Managed agents' specs, each kept with its node, and whether each was stopped or failed. */
public interface AgentStore {
    /** An agent as stored: the spec its creator wrote, when it was stopped and why it failed, if it did. */
    record Stored(String spec, Optional<Instant> stoppedAt, Optional<String> failure) {
    }

    /** Commits a managed node and its agent's spec (the text its creator wrote) in one transaction. */
    void createAgent(Node node, String tokenHash, AuditEntry audit, String spec);

    /**
     * Records what keeps the agent from running: stopped ({@code stoppedAt}), failed
     * ({@code failure}), or nothing (restarted); with the audit entry of it.
     */
    void halted(NodeId id, Optional<Instant> stoppedAt, Optional<String> failure, AuditEntry audit);

    /** The agent {@code id}, unless its node was deleted. */
    Optional<Stored> agent(NodeId id);

    /** Every agent whose node is not deleted, by id. */
    Map<NodeId, Stored> agents();
}
