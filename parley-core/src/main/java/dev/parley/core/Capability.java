package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A capability (distributed-pipes §9): work a node offers under a stable address
 * ({@code cap.…}), with the skill other agents use to delegate it and the skill its owner
 * runs, each at a version, the contract its results must meet (a JSON Schema), and how long
 * it takes by default. Tasks addressed to it go to its owner while it is published.
 */
public record Capability(String id, NodeId owner, SkillRef delegation, SkillRef executor, Optional<JsonText> contract,
                         Duration eta, Instant publishedAt) {
    /** How capability ids look; a task's {@code to} of this shape addresses a capability. */
    public static final Pattern ID = Pattern.compile("^cap\\.[a-z0-9][a-z0-9._-]*$");
    /** Longest capability id. */
    public static final int MAX_ID = 128;
    /** How long a capability's task takes when its declaration does not say. */
    public static final Duration DEFAULT_ETA = Duration.ofHours(1);
    private static final Duration MAX_ETA = Duration.ofDays(7);

    public Capability {
        requireId(id);
        if (eta.compareTo(Duration.ofSeconds(1)) < 0 || eta.compareTo(MAX_ETA) > 0) {
            throw invalid("eta: between 1s and 7d");
        }
    }

    /** Whether {@code address} names a capability rather than a node. */
    public static boolean addresses(String address) {
        return address.startsWith("cap.");
    }

    /** Refuses an id that is not a capability id, saying how one looks. */
    public static String requireId(String id) {
        if (id.length() > MAX_ID || !ID.matcher(id).matches()) {
            throw invalid("capabilityId must match " + ID.pattern() + " (at most " + MAX_ID + " characters), not '"
                    + id + "'");
        }
        return id;
    }

    /** A skill by reference (a name, a URI) at a version. */
    public record SkillRef(String ref, String version) {
        public SkillRef {
            if (!VisibleAscii.within(ref, 200)) {
                throw invalid("a skill ref is 1 to 200 printable characters without spaces, not '" + ref + "'");
            }
            if (!VisibleAscii.within(version, 64)) {
                throw invalid("a skill version is 1 to 64 printable characters without spaces, not '" + version + "'");
            }
        }

        /** {@code ref@version}, as the CLI takes and shows it. */
        public String wire() {
            return ref + "@" + version;
        }
    }

    private static ParleyException invalid(String why) {
        return new ParleyException(ErrorCode.INVALID_REQUEST, why);
    }
}
