package dev.parley.core;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A unit of delegated work from {@code creator} to {@code assignee}. With
 * {@code ephemeral}, the assignee was spawned for the task and is removed when it ends.
 */
public record Task(String id, NodeId creator, NodeId assignee, String title, Optional<JsonText> input,
                   TaskState state, boolean ephemeral, Optional<Long> etaSeconds, Optional<JsonText> progress,
                   Optional<JsonText> result, List<TaskEvent.Artifact> artifacts, Optional<String> reason,
                   Instant createdAt, Instant updatedAt) {
    public Task {
        artifacts = List.copyOf(artifacts);
    }

    /** A task as its creator submits it, at {@code at}. */
    public static Task submitted(String id, NodeId creator, NodeId assignee, String title, Optional<JsonText> input,
                                 boolean ephemeral, Instant at) {
        return new Task(id, creator, assignee, title, input, TaskState.SUBMITTED, ephemeral, Optional.empty(),
                Optional.empty(), Optional.empty(), List.of(), Optional.empty(), at, at);
    }

    /** Whether the task ended and took its assignee with it: a node spawned for it is deleted then. */
    public boolean recycled() {
        return ephemeral && state.terminal();
    }

    /** The task after {@code event}, as the state machine allows. */
    public Task after(TaskEvent event, Instant at) {
        TaskState next = state.on(event);
        return switch (event) {
            case TaskEvent.Accept a -> new Task(id, creator, assignee, title, input, next, ephemeral, a.etaSeconds(),
                    progress, result, artifacts, reason, createdAt, at);
            case TaskEvent.Update u -> new Task(id, creator, assignee, title, input, next, ephemeral, etaSeconds,
                    u.progress().or(() -> progress), result, artifacts, reason, createdAt, at);
            case TaskEvent.Complete c -> new Task(id, creator, assignee, title, input, next, ephemeral, etaSeconds,
                    progress, c.result(), c.artifacts(), reason, createdAt, at);
            case TaskEvent.Fail f -> new Task(id, creator, assignee, title, input, next, ephemeral, etaSeconds,
                    progress, result, artifacts, Optional.of(f.reason()), createdAt, at);
            case TaskEvent.Cancel c -> new Task(id, creator, assignee, title, input, next, ephemeral, etaSeconds,
                    progress, result, artifacts, Optional.of(c.reason()), createdAt, at);
        };
    }
}
