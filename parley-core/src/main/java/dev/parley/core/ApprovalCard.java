package dev.parley.core;

import java.time.Instant;
import java.util.Locale;
import java.util.Optional;

/**
 * A question the hub asks a person: let a new sender into a messaging group (with the message
 * held until the answer), or wire a room the bot was called into. One pending card per group
 * and sender; only {@code approver} (or the admin) answers it.
 */
public record ApprovalCard(String id, Kind kind, String groupId, Optional<NodeId> approver, ChatEvent held,
                           Instant raisedAt) {
    /** The kind of the envelope that brings a card to its approver. */
    public static final String ENVELOPE_KIND = "approval_card";

    /** What the card asks. */
    public enum Kind {
        /** "New sender": let them into the group? */
        SENDER,
        /** "New room": wire it to agents? */
        ROOM;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** An answer. */
    public sealed interface Answer {
        /** Yes; for a room card, the agents to wire it to (with the room kind's defaults). */
        record Approve(java.util.List<NodeId> agents) implements Answer {
            public Approve {
                agents = java.util.List.copyOf(agents);
            }
        }

        /** No: a sender's message is dropped and nothing remembered; a room is not asked about again. */
        record Reject() implements Answer {
        }
    }
}
