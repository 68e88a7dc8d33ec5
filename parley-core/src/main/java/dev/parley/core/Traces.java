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
import java.util.logging.Level;
import java.util.logging.Logger;
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
    /** Most characters of events (their JSON) one turn holds. */
    public static final long MAX_TURN_CHARS = 2L * 1024 * 1024;
    /** Most turns one trace query answers. */
    public static final int MAX_TURNS = 100;
    /** Most characters of events one trace query answers; the turns past it come without their events. */
    public static final long MAX_ANSWER_CHARS = 16L * 1024 * 1024;
    /** Turns recorded at once are checked and appended under one of these locks, by node and turn. */
    private static final int STRIPES = 64;
    /**
     * A turn's span is the span named {@code turn/<turn id>} under its envelope's
     * ({@link TraceContext#child(String)}): a runner knows it before it records anything, and
     * hands it to what the turn runs (a {@code TRACEPARENT} variable), whose sends then join it.
     */
    public static final String TURN_SPAN = "turn/";
    private static final Logger LOG = Logger.getLogger(Traces.class.getName());
    private static final Pattern TURN_ID = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");
    private static final Pattern ADAPTER = Pattern.compile("^[a-z][a-z0-9_-]{0,31}$");

    private final Graph graph;
    private final EventStore envelopes;
    private final TraceStore store;
    private final InstantSource clock;
    private final List<Consumer<Turn.WithEvents>> ended = new CopyOnWriteArrayList<>();
    private final Object[] stripes = new Object[STRIPES];

    {
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Object();
        }
    }

    public Traces(Graph graph, EventStore envelopes, TraceStore store, InstantSource clock) {
        this.graph = graph;
        this.envelopes = envelopes;
        this.store = store;
        this.clock = clock;
    }

    /** What a call recorded: the turn and how many of its events were new. */
    public record Recorded(Turn turn, int accepted) {
    }

    /** A trace as a caller sees it: its turns, and whether some were left out (too many, too large). */
    public record View(String traceId, List<Turn.WithEvents> turns, boolean truncated) {
    }

    /** Calls {@code listener} with each turn when its stop event is recorded. */
    public void onTurnEnded(Consumer<Turn.WithEvents> listener) {
        ended.add(listener);
    }

    /**
     * Records {@code events} of the caller's turn {@code turnId} on envelope {@code envelopeId}
     * (one the caller received), starting the turn on its first call.
     */
    public Recorded record(Principal caller, String turnId, String envelopeId, String adapter,
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
        Recorded recorded;
        // the check of what the turn has and the append go together, for this turn only
        synchronized (stripes[Math.floorMod((node.id().value() + "/" + turnId).hashCode(), STRIPES)]) {
            recorded = append(node, turnId, worked, adapter, events);
        }
        if (recorded.accepted() > 0 && recorded.turn().stoppedAt().isPresent() && !ended.isEmpty()) {
            Turn.WithEvents whole = new Turn.WithEvents(recorded.turn(), store.events(node.id(), turnId));
            for (Consumer<Turn.WithEvents> listener : ended) {
                try {
                    listener.accept(whole);
                } catch (RuntimeException e) { // recorded all the same: a listener's failure is its own
                    LOG.log(Level.WARNING, "a listener failed on the end of turn " + turnId + " of " + node.id(), e);
                }
            }
        }
        return recorded;
    }

    private Recorded append(Node node, String turnId, MessageRecord worked, String adapter, List<Turn.Event> events) {
        String envelopeId = worked.envelope().id();
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
                worked.envelope().trace().context().child(TURN_SPAN + turnId), clock.instant(), Optional.empty(), 0, 0));
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
        long chars = turn.chars() + fresh.stream().mapToLong(e -> e.json().length()).sum();
        if (chars > MAX_TURN_CHARS) {
            throw new ParleyException(ErrorCode.PAYLOAD_TOO_LARGE, "a turn holds at most " + MAX_TURN_CHARS
                    + " characters of events; these would make it " + chars);
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
                turn.startedAt(), stopped, turn.events() + fresh.size(), chars);
        store.append(updated, existing.isEmpty(), fresh);
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
    public View trace(Principal caller, String traceId) {
        View view = view(caller, traceId);
        if (view.turns().isEmpty()) {
            throw new ParleyException(ErrorCode.TRACE_NOT_FOUND, "no trace " + traceId + " with turns you may see");
        }
        return view;
    }

    /**
     * The trace of envelope {@code envelopeId}: its turns the caller may see (none yet: an
     * empty list). The caller sees the envelope as a party, the parent of a party, or the admin.
     */
    public View ofMessage(Principal caller, String envelopeId) {
        MessageRecord record = envelopes.message(envelopeId).filter(r -> sees(caller, r.envelope().from())
                || sees(caller, r.envelope().to())).orElseThrow(() -> Messages.notFound(envelopeId));
        return view(caller, record.envelope().trace().context().traceId());
    }

    /**
     * The visible turns of a trace, oldest first: chosen among the caller's own (its node and
     * its children; the admin's: all) before any limit, so turns of others in the same trace
     * never push them out; at most {@link #MAX_TURNS}, their events while the answer stays
     * within {@link #MAX_ANSWER_CHARS}.
     */
    private View view(Principal caller, String traceId) {
        Optional<Set<NodeId>> owners = switch (caller) {
            case Principal.Admin a -> Optional.empty();
            case Principal.Caller c -> {
                Set<NodeId> own = new HashSet<>(graph.children(c.id()));
                own.add(c.id());
                yield Optional.of(own);
            }
        };
        List<Turn> turns = store.turnsOfTrace(traceId, owners, MAX_TURNS + 1);
        boolean truncated = turns.size() > MAX_TURNS;
        List<Turn.WithEvents> out = new ArrayList<>();
        long chars = 0;
        for (Turn turn : turns.subList(0, Math.min(turns.size(), MAX_TURNS))) {
            chars += turn.chars();
            if (chars > MAX_ANSWER_CHARS) {
                truncated = true;
                break;
            }
            out.add(new Turn.WithEvents(turn, store.events(turn.node(), turn.id())));
        }
        return new View(traceId, out, truncated);
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
