package dev.parley.core;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A request to delegate work: to an existing node, or to a child the hub spawns for it.
 * Only a spawned assignee can be {@code ephemeral} (removed when the task ends): the hub
 * never deletes a node it did not create for the task. With {@code messageId}, submitting the
 * same request again answers the task the first one created.
 */
public record NewTask(Assignee assignee, String title, Optional<JsonText> input, boolean ephemeral,
                      Optional<String> messageId) {
    /** Longest title accepted; a title names the work, the input carries it. */
    public static final int MAX_TITLE = 500;

    /** A task without an idempotency key. */
    public NewTask(Assignee assignee, String title, Optional<JsonText> input, boolean ephemeral) {
        this(assignee, title, input, ephemeral, Optional.empty());
    }

    /**
     * {@code messageId} is the creator's idempotency key, shared with its sends: the same key
     * from the same creator again answers the task the first request created.
     */
    public NewTask {
        if (title.isBlank() || title.length() > MAX_TITLE) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "title must be 1 to " + MAX_TITLE + " characters");
        }
        if (ephemeral && (assignee instanceof Assignee.Existing || assignee instanceof Assignee.Through)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "ephemeral is allowed only with spawn");
        }
        if (!ephemeral && assignee instanceof Assignee.Provisioned) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "a child provisioned from a template is recycled"
                    + " when its task ends: ephemeral cannot be false with spawn.template");
        }
    }

    /** Who is to do the work. */
    public sealed interface Assignee {
        /** A node that exists and that the creator's ACL lets it reach. */
        record Existing(NodeId id) implements Assignee {
        }

        /** Whoever owns published capability {@code id}, reached under the creator's ACL as any node. */
        record Through(String capabilityId) implements Assignee {
            public Through {
                Capability.requireId(capabilityId);
            }
        }

        /**
         * A new managed agent, child of the creator, that the hub runs for this task with the
         * spec of agent {@code template} (an agent the creator is the parent of), reaching
         * beyond its group only {@code talksWith} (its capabilities, each a node the creator
         * itself may reach); recycled when the task ends.
         */
        record Provisioned(NodeId id, NodeId template, List<NodeId> talksWith) implements Assignee {
            public Provisioned {
                talksWith = List.copyOf(talksWith);
            }
        }

        /** A new child of the creator, registered for this task. */
        record Spawned(NodeId id, NodeKind kind, Map<String, String> labels) implements Assignee {
            public Spawned {
                labels = Map.copyOf(labels);
            }
        }
    }
}
