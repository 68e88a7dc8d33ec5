package dev.parley.trace.permission;

import dev.parley.trace.TraceEvent;

/**
 * How a request was decided: the verdict, who or what decided ({@code blocklist},
 * {@code policy:RULE}, {@code node:ID}, {@code timeout}, {@code nobody}) and why, in words.
 */
public record Decision(TraceEvent.Verdict verdict, String decidedBy, String reason) {
    public static Decision allow(String decidedBy, String reason) {
        return new Decision(TraceEvent.Verdict.ALLOW, decidedBy, reason);
    }

    public static Decision deny(String decidedBy, String reason) {
        return new Decision(TraceEvent.Verdict.DENY, decidedBy, reason);
    }
}
