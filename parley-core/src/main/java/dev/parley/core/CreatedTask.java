package dev.parley.core;

import java.util.Optional;

/**
 * A task just submitted and, when its assignee was spawned for it, that node's token (shown
 * this once). {@code duplicate}: the creator's messageId had already submitted this task.
 */
public record CreatedTask(Task task, Optional<String> assigneeToken, boolean duplicate) {
    public CreatedTask(Task task, Optional<String> assigneeToken) {
        this(task, assigneeToken, false);
    }
}
