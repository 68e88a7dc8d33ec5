package dev.parley.trace.permission;

import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;

import java.util.List;
import java.util.Optional;

/**
 * Decides permission requests: each {@link Decider} in turn, the first with an opinion
 * decides; when none has one the request is denied ({@code nobody}: no one was there to ask).
 * With the caller's turn at hand, the request and its response are recorded in it.
 */
public final class PermissionMediator {
    private PermissionMediator() {
    }

    /**
     * The decision on {@code ask}. A decider that throws (the approver is out of reach) ends the
     * request with that refusal; the turn records it as denied, {@code refused}.
     */
    public static Decision decide(PermissionAsk ask, List<Decider> deciders, Optional<TraceBuilder> turn)
            throws InterruptedException {
        turn.ifPresent(trace -> trace.permissionRequest(ask.requestId(), ask.tool(), ask.kind(), ask.input(),
                Optional.empty()));
        Decision decision;
        try {
            decision = first(ask, deciders);
        } catch (RuntimeException e) {
            turn.ifPresent(trace -> trace.permissionResponse(ask.requestId(), TraceEvent.Verdict.DENY, "refused",
                    String.valueOf(e.getMessage())));
            throw e;
        }
        turn.ifPresent(trace -> trace.permissionResponse(ask.requestId(), decision.verdict(), decision.decidedBy(),
                decision.reason()));
        return decision;
    }

    private static Decision first(PermissionAsk ask, List<Decider> deciders) throws InterruptedException {
        for (Decider decider : deciders) {
            Optional<Decision> decision = decider.decide(ask);
            if (decision.isPresent()) {
                return decision.get();
            }
        }
        return Decision.deny("nobody", "no rule decided and there was no one to ask");
    }
}
