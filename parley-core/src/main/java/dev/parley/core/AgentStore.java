package dev.parley.core;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** Managed agents' specs, each kept with its node, and whether each was stopped. */
public interface AgentStore {
    /** An agent as stored: the spec its creator wrote, and when it was stopped, if it is. */
    record Stored(String spec, Optional<Instant> stoppedAt) {
    }

    /** Commits a managed node and its agent's spec (the text its creator wrote) in one transaction. */
    void createAgent(Node node, String tokenHash, AuditEntry audit, String spec);

    /** Records that the agent was stopped ({@code at}) or restarted (empty), with the audit entry of it. */
    void stopped(NodeId id, Optional<Instant> at, AuditEntry audit);

    /** The agent {@code id}, unless its node was deleted. */
    Optional<Stored> agent(NodeId id);

    /** Every agent whose node is not deleted, by id. */
    Map<NodeId, Stored> agents();
}
