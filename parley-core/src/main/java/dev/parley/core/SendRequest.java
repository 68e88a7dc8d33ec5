package dev.parley.core;

import java.time.Duration;
import java.util.Optional;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A node's request to send. {@code claimedFrom} is a {@code from} found in the request
 * body, which must match the caller. With {@code replyWithin}, the sender is told by an
 * {@code incident} envelope when no reply or processed ack comes in that time.
 */
public record SendRequest(NodeId to, String kind, Payload payload, Optional<String> claimedFrom,
                          Optional<Duration> replyWithin) {
    public static final String DEFAULT_KIND = "message";
    private static final Pattern KIND = Pattern.compile("^[a-z][a-z0-9_.-]{0,63}$");
    /** Kinds the hub itself emits, with the route each travels on; a node cannot forge them with a plain send. */
    private static final Map<String, Route> RESERVED = Map.ofEntries(Map.entry("reply", Route.REPLY),
            Map.entry(Topics.EVENT_KIND, Route.TOPIC), Map.entry(Broadcasts.KIND, Route.BROADCAST),
            Map.entry("dead_letter", Route.SYSTEM), Map.entry("incident", Route.SYSTEM),
            Map.entry(SkillReview.KIND, Route.SYSTEM), Map.entry(ApprovalCard.ENVELOPE_KIND, Route.SYSTEM), Map.entry(Tasks.KIND, Route.TASK),
            Map.entry("task_accept", Route.TASK), Map.entry("task_update", Route.TASK),
            Map.entry("task_complete", Route.TASK), Map.entry("task_failed", Route.TASK),
            Map.entry("task_canceled", Route.TASK));

    /**
     * {@code kind}, refused unless it matches {@code ^[a-z][a-z0-9_.-]{0,63}$}: a stream writes it
     * bare on its {@code event:} line, so nothing else may reach an inbox, from a node or from a
     * peer gateway, nor name a kind in a policy's check or a schema.
     */
    public static String requireKind(String kind) {
        if (kind == null || !KIND.matcher(kind).matches()) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "kind must match " + KIND.pattern());
        }
        return kind;
    }

    /** The route a kind the hub emits travels on; empty for a kind nodes may send. */
    public static Optional<Route> hubRoute(String kind) {
        return Optional.ofNullable(RESERVED.get(kind));
    }

    /**
     * The node {@code caller} sends as: the one its token acts as, which a {@code from} in the
     * body must name if it is there ({@code identity_mismatch}).
     */
    Node sender(Principal caller, Graph graph) {
        Node sender = caller.actingNode(graph, "send");
        Optional<ParleyException> mismatch = claimedBy(sender);
        if (mismatch.isPresent()) {
            throw mismatch.get();
        }
        return sender;
    }

    /** The refusal when the body's {@code from} names another node than {@code sender}. */
    Optional<ParleyException> claimedBy(Node sender) {
        return claimedFrom.filter(from -> !from.equals(sender.id().value()))
                .map(from -> new ParleyException(ErrorCode.IDENTITY_MISMATCH,
                        "from must be the caller (" + sender.id() + ") or absent"));
    }

    public SendRequest {
        requireKind(kind);
        if (replyWithin.isPresent() && (replyWithin.get().toMillis() < 1 || replyWithin.get().toMillis() > 604_800_000L)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "replyWithinMs must be between 1 and 604800000 (7 days)");
        }
        if (RESERVED.containsKey(kind)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "kind " + kind + " is emitted by the hub and cannot be sent");
        }
    }
}
