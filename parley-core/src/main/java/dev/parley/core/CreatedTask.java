package dev.parley.core;

import java.util.Optional;

/**
 * A task just submitted and, when its assignee was spawned for it, that node's token (shown
 * this once), or, when it was provisioned from a template, the agent the hub is to run.
 * {@code duplicate}: the creator's messageId had already submitted this task.
 */
public record CreatedTask(Task task, Optional<String> assigneeToken, boolean duplicate, Optional<AgentSpec> agent) {
    public CreatedTask(Task task, Optional<String> assigneeToken, boolean duplicate) {
        this(task, assigneeToken, duplicate, Optional.empty());
    }
}
