package dev.parley.core;

import java.util.Optional;

/** A task just submitted and, when its assignee was spawned for it, that node's token (shown this once). */
public record CreatedTask(Task task, Optional<String> assigneeToken) {
}
