package dev.parley.core;

import java.util.Optional;

/**
 * Which tasks to list: those {@code involving} a node (as creator or assignee), assigned to
 * {@code assignee}, in {@code state}; absent parts do not narrow. Newest first, at most {@code limit}.
 */
public record TaskQuery(Optional<NodeId> involving, Optional<NodeId> assignee, Optional<TaskState> state, int limit) {
}
