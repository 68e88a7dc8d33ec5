package dev.parley.core;

import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The hub's record of agent turns. A node records the turns it takes on envelopes it
 * received; each turn joins its envelope's trace. Who sees a turn: its node, that node's
 * parent, and the admin. Events arrive already checked against the trace contract by the
 * edge; here they are bound to their turn: ids unique, a repeat of an event the turn has is
 * taken as a retry, nothing after the stop.
 */
public final class Traces {
    public static final int MAX_EVENTS_PER_CALL = 500;
    public static final int MAX_EVENTS_PER_TURN = 10_000;
    /** Most turns one trace query returns. */
    public static final int MAX_TURNS = 1_000;
    /**
     * A turn's span is the span named {@code turn/<turn id>} under its envelope's
     * ({@link TraceContext#child(String)}): a runner knows it before it records anything, and
     * hands it to what the turn runs (a {@code TRACEPARENT} variable), whose sends then join it.
     */
    public static final String TURN_SPAN = "turn/";
    private static final Pattern TURN_ID = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");
    private static final Pattern ADAPTER = Pattern.compile("^[a-z][a-z0-9_-]{0,31}$");

    private final Graph graph;
    private final EventStore envelopes;
    private final TraceStore store;
    private final InstantSource clock;
    private final List<Consumer<Turn.WithEvents>> ended = new CopyOnWriteArrayList<>();

    public Traces(Graph graph, EventStore envelopes, TraceStore store, InstantSource clock) {
        this.graph = graph;
        this.envelopes = envelopes;
        this.store = store;
        this.clock = clock;
    }

    /** What a call recorded: the turn and how many of its events were new. */
    public record Recorded(Turn turn, int accepted) {
    }

    /** Calls {@code listener} with each turn when its stop event is recorded. */
    public void onTurnEnded(Consumer<Turn.WithEvents> listener) {
        ended.add(listener);
    }

    /**
     * Records {@code events} of the caller's turn {@code turnId} on envelope {@code envelopeId}
     * (one the caller received), starting the turn on its first call.
     */
    public synchronized Recorded record(Principal caller, String turnId, String envelopeId, String adapter,
                                        List<Turn.Event> events) {
        Node node = caller.actingNode(graph, "record a trace");
        if (!TURN_ID.matcher(turnId).matches()) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST,
                    "turn: 1 to 128 letters, digits, . _ : - (starting with a letter or digit)");
        }
        if (!ADAPTER.matcher(adapter).matches()) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "adapter: 1 to 32 lowercase letters, digits, _ -");
        }
        if (events.size() > MAX_EVENTS_PER_CALL) {
            throw new ParleyException(ErrorCode.PAYLOAD_TOO_LARGE, "at most " + MAX_EVENTS_PER_CALL
                    + " events per call; send the rest in another");
        }
        MessageRecord worked = Messages.visible(envelopes, caller, envelopeId);
        if (!worked.envelope().to().equals(node.id())) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "a turn works an envelope its node received; "
                    + envelopeId + " went to " + worked.envelope().to());
        }
        Optional<Turn> existing = store.turn(node.id(), turnId);
        if (existing.isPresent() && !existing.get().envelopeId().equals(envelopeId)) {
            throw new ParleyException(ErrorCode.TURN_CONFLICT, "turn " + turnId + " works envelope "
                    + existing.get().envelopeId() + ", not " + envelopeId);
        }
        if (existing.isPresent() && !existing.get().adapter().equals(adapter)) {
            throw new ParleyException(ErrorCode.TURN_CONFLICT, "turn " + turnId + " was recorded by adapter "
                    + existing.get().adapter() + ", not " + adapter);
        }
        List<Turn.Event> fresh = unseen(node.id(), turnId, events);
        Turn turn = existing.orElseGet(() -> new Turn(node.id(), turnId, envelopeId, adapter,
                worked.envelope().trace().context().child(TURN_SPAN + turnId), clock.instant(), Optional.empty(), 0));
        if (fresh.isEmpty() && existing.isPresent()) {
            return new Recorded(turn, 0);
        }
        if (turn.stoppedAt().isPresent()) {
            throw new ParleyException(ErrorCode.TURN_CONFLICT, "turn " + turnId + " has stopped; it takes no more events");
        }
        if (turn.events() + fresh.size() > MAX_EVENTS_PER_TURN) {
            throw new ParleyException(ErrorCode.PAYLOAD_TOO_LARGE, "a turn holds at most " + MAX_EVENTS_PER_TURN
                    + " events");
        }
        Optional<java.time.Instant> stopped = Optional.empty();
        for (int k = 0; k < fresh.size(); k++) {
            if (fresh.get(k).type().equals(Turn.Event.STOP)) {
                if (k != fresh.size() - 1) {
                    throw new ParleyException(ErrorCode.TURN_CONFLICT, "stop is the last event of a turn; "
                            + (fresh.size() - 1 - k) + " came after it");
                }
                stopped = Optional.of(clock.instant());
            }
        }
        Turn updated = new Turn(turn.node(), turn.id(), turn.envelopeId(), turn.adapter(), turn.context(),
                turn.startedAt(), stopped, turn.events() + fresh.size());
        store.append(updated, existing.isEmpty(), fresh);
        if (stopped.isPresent()) {
            Turn.WithEvents whole = new Turn.WithEvents(updated, store.events(node.id(), turnId));
            ended.forEach(listener -> listener.accept(whole));
        }
        return new Recorded(updated, fresh.size());
    }

    /** The events of {@code events} the turn does not have; one it has with other content is a conflict. */
    private List<Turn.Event> unseen(NodeId node, String turnId, List<Turn.Event> events) {
        Set<String> ids = new HashSet<>();
        for (Turn.Event event : events) {
            if (!ids.add(event.id())) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "event id " + event.id() + " appears twice");
            }
        }
        Map<String, Turn.Event> stored = new HashMap<>();
        store.events(node, turnId, List.copyOf(ids)).forEach(e -> stored.put(e.id(), e));
        List<Turn.Event> fresh = new ArrayList<>(events.size());
        for (Turn.Event event : events) {
            Turn.Event had = stored.get(event.id());
            if (had == null) {
                fresh.add(event);
            } else if (!had.json().equals(event.json())) {
                throw new ParleyException(ErrorCode.TURN_CONFLICT, "event " + event.id() + " of turn " + turnId
                        + " was recorded with other content");
            }
        }
        return fresh;
    }

    /** The turns of trace {@code traceId} the caller may see, with their events. */
    public List<Turn.WithEvents> trace(Principal caller, String traceId) {
        List<Turn.WithEvents> seen = store.turnsOfTrace(traceId, MAX_TURNS).stream().filter(t -> sees(caller, t.node()))
                .map(t -> new Turn.WithEvents(t, store.events(t.node(), t.id()))).toList();
        if (seen.isEmpty()) {
            throw new ParleyException(ErrorCode.TRACE_NOT_FOUND, "no trace " + traceId + " with turns you may see");
        }
        return seen;
    }

    /**
     * The trace of envelope {@code envelopeId}: its trace id and the turns of that trace the
     * caller may see (none yet is an empty list). The caller sees the envelope as a party, or
     * as the parent of a party, or as the admin.
     */
    public Map.Entry<String, List<Turn.WithEvents>> ofMessage(Principal caller, String envelopeId) {
        MessageRecord record = envelopes.message(envelopeId).filter(r -> sees(caller, r.envelope().from())
                || sees(caller, r.envelope().to())).orElseThrow(() -> Messages.notFound(envelopeId));
        String traceId = record.envelope().trace().context().traceId();
        List<Turn.WithEvents> turns = store.turnsOfTrace(traceId, MAX_TURNS).stream()
                .filter(t -> sees(caller, t.node()))
                .map(t -> new Turn.WithEvents(t, store.events(t.node(), t.id()))).toList();
        return Map.entry(traceId, turns);
    }

    /** A node's turns are seen by it, its parent and the admin. */
    private boolean sees(Principal caller, NodeId owner) {
        return switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller c -> c.id().equals(owner)
                    || graph.node(owner).flatMap(Node::parent).filter(c.id()::equals).isPresent();
        };
    }
}
