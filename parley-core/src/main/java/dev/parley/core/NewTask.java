package dev.parley.core;

import java.util.Map;
import java.util.Optional;

/**
 * A request to delegate work: to an existing node, or to a child the hub spawns for it.
 * Only a spawned assignee can be {@code ephemeral} (removed when the task ends): the hub
 * never deletes a node it did not create for the task.
 */
public record NewTask(Assignee assignee, String title, Optional<JsonText> input, boolean ephemeral) {
    /** Longest title accepted; a title names the work, the input carries it. */
    public static final int MAX_TITLE = 500;

    public NewTask {
        if (title.isBlank() || title.length() > MAX_TITLE) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "title must be 1 to " + MAX_TITLE + " characters");
        }
        if (ephemeral && !(assignee instanceof Assignee.Spawned)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "ephemeral is allowed only with spawn");
        }
    }

    /** Who is to do the work. */
    public sealed interface Assignee {
        /** A node that exists and that the creator's ACL lets it reach. */
        record Existing(NodeId id) implements Assignee {
        }

        /** A new child of the creator, registered for this task. */
        record Spawned(NodeId id, NodeKind kind, Map<String, String> labels) implements Assignee {
            public Spawned {
                labels = Map.copyOf(labels);
            }
        }
    }
}
