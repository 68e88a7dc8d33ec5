package dev.parley.trace;

import dev.parley.core.ToolKind;
import com.fasterxml.jackson.databind.JsonNode;

import java.math.BigDecimal;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Makes the events of one turn, in order: ids ({@code e1}, {@code e2}, …), times from the clock,
 * and nesting — a tool's result under its call, a permission request under the call it is for,
 * a response under its request; everything else at the turn's top level. Each event is handed
 * to the sink as it is made; after {@link #stop} the turn takes no more. One builder per turn,
 * used from one thread at a time.
 */
public final class TraceBuilder {
    private final InstantSource clock;
    private final Consumer<TraceEvent> sink;
    private final String idPrefix;
    private final List<TraceEvent> events = new ArrayList<>();
    private final Map<String, String> calls = new HashMap<>();
    private final Map<String, String> requests = new HashMap<>();
    private long next = 1;
    private boolean stopped;

    public TraceBuilder(InstantSource clock, Consumer<TraceEvent> sink) {
        this(clock, sink, "e");
    }

    /** A builder whose ids start with {@code idPrefix}, for events added to a turn someone else also writes. */
    public TraceBuilder(InstantSource clock, Consumer<TraceEvent> sink, String idPrefix) {
        this.clock = clock;
        this.sink = sink;
        this.idPrefix = idPrefix;
    }

    public TraceEvent.Message message(TraceEvent.Role role, String text) {
        return emit(new TraceEvent.Message(nextId(), Optional.empty(), clock.instant(), role, text));
    }

    public TraceEvent.Thought thought(String text) {
        return emit(new TraceEvent.Thought(nextId(), Optional.empty(), clock.instant(), text));
    }

    public TraceEvent.ToolCall toolCall(String callId, String tool, ToolKind kind, JsonNode input) {
        TraceEvent.ToolCall call = new TraceEvent.ToolCall(nextId(), Optional.empty(), clock.instant(), callId, tool,
                kind, input);
        calls.put(callId, call.id());
        return emit(call);
    }

    /** The result of call {@code callId}: nested under it when this turn made the call. */
    public TraceEvent.ToolResult toolResult(String callId, boolean error, String output) {
        return emit(new TraceEvent.ToolResult(nextId(), Optional.ofNullable(calls.get(callId)), clock.instant(),
                callId, error, output));
    }

    public TraceEvent.Usage usage(Optional<String> model, long inputTokens, long outputTokens, long cacheReadTokens,
                                  long cacheWriteTokens, Optional<BigDecimal> costUsd) {
        return emit(new TraceEvent.Usage(nextId(), Optional.empty(), clock.instant(), model, inputTokens,
                outputTokens, cacheReadTokens, cacheWriteTokens, costUsd));
    }

    /** A permission request, nested under call {@code callId} when there is one this turn made. */
    public TraceEvent.PermissionRequest permissionRequest(String requestId, String tool, ToolKind kind, JsonNode input,
                                                          Optional<String> callId) {
        TraceEvent.PermissionRequest request = new TraceEvent.PermissionRequest(nextId(),
                callId.map(calls::get), clock.instant(), requestId, tool, kind, input);
        requests.put(requestId, request.id());
        return emit(request);
    }

    public TraceEvent.PermissionResponse permissionResponse(String requestId, TraceEvent.Verdict verdict,
                                                            String decidedBy, String reason) {
        return emit(new TraceEvent.PermissionResponse(nextId(), Optional.ofNullable(requests.get(requestId)),
                clock.instant(), requestId, verdict, decidedBy, reason));
    }

    /** Ends the turn. */
    public TraceEvent.Stop stop(TraceEvent.StopReason reason, Optional<String> detail) {
        TraceEvent.Stop stop = emit(new TraceEvent.Stop(nextId(), Optional.empty(), clock.instant(), reason, detail));
        stopped = true;
        return stop;
    }

    public boolean stopped() {
        return stopped;
    }

    /** The events made so far, in order. */
    public List<TraceEvent> events() {
        return List.copyOf(events);
    }

    private String nextId() {
        if (stopped) {
            throw new IllegalStateException("the turn has stopped; it takes no more events");
        }
        return idPrefix + next++;
    }

    private <E extends TraceEvent> E emit(E event) {
        events.add(event);
        sink.accept(event);
        return event;
    }
}
