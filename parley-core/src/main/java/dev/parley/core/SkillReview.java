package dev.parley.core;

import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * A misfire of a capability, raised for review of its skills: which capability, both skill
 * versions in force, what went wrong, and the ids of samples (tasks, refused requests) that
 * show it.
 */
public record SkillReview(String id, String capabilityId, NodeId owner, Capability.SkillRef delegation,
                          Capability.SkillRef executor, Failure failure, String detail, List<String> sampleIds,
                          Instant raisedAt) {
    /** The kind of the envelope that tells a capability's owner of a review. */
    public static final String KIND = "skill_review";

    public SkillReview {
        sampleIds = List.copyOf(sampleIds);
    }

    /** What went wrong. */
    public enum Failure {
        /** A task was not done within its ETA (the assignee's accepted one, else the capability's). */
        ETA_BREACH,
        /** A task failed. */
        TERMINAL_FAILURE,
        /** A task's result breaks the capability's contract schema. */
        CONTRACT_VIOLATION,
        /** Tasks addressed to the capability could not be routed to its owner, again and again. */
        ROUTING_MISS;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }
}
