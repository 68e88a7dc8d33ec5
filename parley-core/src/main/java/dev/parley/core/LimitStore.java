package dev.parley.core;

import java.util.Map;

/** The per-node rate overrides, kept across restarts. */
public interface LimitStore {
    Map<NodeId, Rate> limits();

    void putLimit(NodeId node, Rate rate, AuditEntry audit);

    void deleteLimit(NodeId node, AuditEntry audit);
}
