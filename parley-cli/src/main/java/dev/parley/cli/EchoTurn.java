package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.trace.ToolKinds;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.adapter.EchoAdapter;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/** Answers each envelope with what it says ({@code parley agent echo}): the simplest agent, to try a hub's wiring. */
record EchoTurn() implements Turn {
    @Override
    public String tool() {
        return "echo";
    }

    @Override
    public String adapter() {
        return ToolKinds.ECHO;
    }

    @Override
    public Outcome take(JsonNode envelope, Duration timeout, Consumer<String> toolStarted, TraceBuilder trace,
                        Optional<String> traceparent) {
        return new Outcome.Output(new EchoAdapter(trace).answer(Turn.body(envelope)));
    }
}
