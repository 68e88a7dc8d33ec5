package dev.parley.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import dev.parley.core.Traces;
import dev.parley.core.Turn;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;
import dev.parley.trace.TraceEvents;
import dev.parley.trace.TraceFormatException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Agent turns and their traces: a runner records the events of its turns
 * ({@code POST /v1/traces/{turn}/events}), and a node, its parent or the admin read a trace
 * by its id or by one of its messages. Every event is read through the trace contract's
 * codec and kept in its canonical form, so what the store holds is the contract.
 */
public final class TraceRoutes {
    private static final Pattern TRACE_ID = Pattern.compile("^[0-9a-f]{32}$");

    private final Traces traces;

    public TraceRoutes(Traces traces) {
        this.traces = traces;
    }

    public void register(Routes routes) {
        routes.post("/v1/traces/{turn}/events", this::record)
                .get("/v1/traces/{id}", this::trace)
                .get("/v1/messages/{id}/trace", this::ofMessage);
    }

    private void record(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        List<Body> given = body.objects("events");
        if (given.isEmpty()) {
            throw Body.invalid("field 'events' is required: a list of 1 to " + Traces.MAX_EVENTS_PER_CALL + " events");
        }
        List<Turn.Event> events = new ArrayList<>(given.size());
        for (int k = 0; k < given.size(); k++) {
            try {
                events.add(TraceEvents.stored(TraceEvents.fromJson(given.get(k).json())));
            } catch (TraceFormatException e) {
                throw Body.invalid("events[" + k + "]: " + e.getMessage());
            }
        }
        Traces.Recorded recorded = traces.record(caller, ex.path("turn"), body.requiredString("envelope"),
                body.requiredString("adapter"), events);
        ex.json(200, Json.object().put("turn", recorded.turn().id()).put("traceId", recorded.turn().context().traceId())
                .put("spanId", recorded.turn().context().spanId()).put("accepted", recorded.accepted()));
    }

    private void trace(Exchange ex) {
        var caller = ex.caller();
        String id = ex.path("id");
        if (!TRACE_ID.matcher(id).matches()) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "a trace id is 32 lowercase hex digits");
        }
        ex.json(200, view(traces.trace(caller, id)));
    }

    private void ofMessage(Exchange ex) {
        ex.json(200, view(traces.ofMessage(ex.caller(), ex.path("id"))));
    }

    private static ObjectNode view(Traces.View trace) {
        ObjectNode out = Json.object().put("traceId", trace.traceId());
        ArrayNode items = out.putArray("turns");
        for (Turn.WithEvents whole : trace.turns()) {
            Turn turn = whole.turn();
            ObjectNode item = items.addObject().put("turn", turn.id()).put("node", turn.node().value())
                    .put("envelope", turn.envelopeId()).put("adapter", turn.adapter())
                    .put("spanId", turn.context().spanId()).put("startedAt", Json.time(turn.startedAt()));
            turn.context().parentSpanId().ifPresent(p -> item.put("parentSpanId", p));
            turn.stoppedAt().ifPresent(t -> item.put("stoppedAt", Json.time(t)));
            ArrayNode events = item.putArray("events");
            whole.events().forEach(e -> events.add(tree(e.json())));
        }
        out.put("truncated", trace.truncated());
        return out;
    }

    private static JsonNode tree(String json) {
        try {
            return Json.MAPPER.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
