package dev.parley.trace.adapter;

import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;

import java.util.Optional;

/** The trace of an echo turn: what it was sent, the same text as its answer, the stop. */
public final class EchoAdapter {
    private final TraceBuilder trace;

    public EchoAdapter(TraceBuilder trace) {
        this.trace = trace;
    }

    /** Answers {@code text} with itself. */
    public String answer(String text) {
        trace.message(TraceEvent.Role.USER, text);
        trace.message(TraceEvent.Role.ASSISTANT, text);
        trace.stop(TraceEvent.StopReason.END_TURN, Optional.empty());
        return text;
    }
}
