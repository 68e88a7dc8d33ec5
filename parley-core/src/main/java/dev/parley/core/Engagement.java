package dev.parley.core;

import java.util.Locale;
import java.util.Optional;

/**
 * What a chat message does for each agent wired to its messaging group (issue 13: nanoclaw's
 * engagement rules, as one general mechanism): the group lets the sender in or not
 * ({@link #admit}), then each wiring decides on its own ({@link #engage}) whether the message
 * wakes the agent, is kept as context only, or is skipped. Pure: the hub feeds it what it knows.
 */
public final class Engagement {
    private Engagement() {
    }

    /** When a wired agent engages with a message. */
    public enum Mode {
        /** When its {@code engagePattern} is found in the text ({@code .}: always). */
        PATTERN,
        /** When the message mentions the bot. */
        MENTION,
        /** When the message mentions the bot, and from then on in that thread. */
        MENTION_STICKY;

        public String wire() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** Whose messages a wiring considers at all. */
    public enum SenderScope {
        /** Every sender the group let in. */
        ALL,
        /** Only the group's known members (approved or added), not public passers-by. */
        KNOWN;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What becomes of a message a wiring does not engage with. */
    public enum Ignored {
        /** Skipped and counted. */
        DROP,
        /** Stored for the agent as context only: it never wakes it. */
        ACCUMULATE;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What a group does with a sender that is not one of its members. */
    public enum UnknownSenders {
        /** Dropped. */
        STRICT,
        /** Held, and a card asks the group's approver (the default). */
        REQUEST_APPROVAL,
        /** Let in as a passer-by (not a known member). */
        PUBLIC;

        public String wire() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** The kind of room a messaging group is; it chooses the wiring's defaults. */
    public enum RoomKind {
        DM, GROUP, THREADED;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The engage mode a new wiring of such a room gets: a DM always engages, a threaded room sticks to a thread. */
        public Mode defaultMode() {
            return switch (this) {
                case DM -> Mode.PATTERN;
                case THREADED -> Mode.MENTION_STICKY;
                case GROUP -> Mode.MENTION;
            };
        }
    }

    /** What the group does with a sender. */
    public sealed interface Admission {
        /** In: a member ({@code known}), or a passer-by of a public group. */
        record In(boolean known) implements Admission {
        }

        /** Held until the approver answers the card this raises. */
        record Held() implements Admission {
        }

        /** Not in, with why (counted and logged). */
        record Out(String why) implements Admission {
        }
    }

    /** What one wiring makes of a message. */
    public enum Outcome {
        /** A turn: the envelope wakes the agent. */
        WAKE,
        /** Stored for the agent with {@code trigger: false}: context of its next turn. */
        CONTEXT,
        /** Not for this agent: counted. */
        SKIP
    }

    /**
     * The group-level gate, before any wiring: a member is in; otherwise the group's policy
     * decides. {@code cardPending}: a card for this sender in this group waits for an answer
     * (a second message is then dropped: one card per group and sender).
     */
    public static Admission admit(UnknownSenders policy, boolean member, boolean cardPending,
                                  Optional<NodeId> approver) {
        if (member) {
            return new Admission.In(true);
        }
        return switch (policy) {
            case PUBLIC -> new Admission.In(false);
            case STRICT -> new Admission.Out("unknown sender: the group admits members only");
            case REQUEST_APPROVAL -> approver.isEmpty()
                    ? new Admission.Out("unknown sender and no approver: treated as strict")
                    : cardPending ? new Admission.Out("unknown sender whose approval card is pending")
                    : new Admission.Held();
        };
    }

    /**
     * One wiring's decision. {@code matches} says whether its pattern is found in the text
     * (asked only in {@code pattern} mode); {@code threadEngaged}: the agent engaged in this
     * message's thread before ({@code mention-sticky}).
     */
    public static Outcome engage(Mode mode, SenderScope scope, Ignored ignored, boolean known, boolean mentioned,
                                 boolean threadEngaged, java.util.function.BooleanSupplier matches) {
        if (scope == SenderScope.KNOWN && !known) {
            return Outcome.SKIP;
        }
        boolean engaged = switch (mode) {
            case PATTERN -> matches.getAsBoolean();
            case MENTION -> mentioned;
            case MENTION_STICKY -> mentioned || threadEngaged;
        };
        if (engaged) {
            return Outcome.WAKE;
        }
        return ignored == Ignored.ACCUMULATE ? Outcome.CONTEXT : Outcome.SKIP;
    }
}
