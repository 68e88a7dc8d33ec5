package dev.parley.server.telemetry;

import dev.parley.core.Envelope;
import dev.parley.core.EventStore;
import dev.parley.core.Notifier;
import dev.parley.core.TraceContext;
import dev.parley.core.Turn;
import dev.parley.store.CommitObserver;
import dev.parley.server.wire.Json;
import dev.parley.trace.ToolKinds;
import dev.parley.trace.TraceEvent;
import dev.parley.trace.TraceEvents;
import dev.parley.trace.export.AgentTurn;
import dev.parley.trace.export.HubSpan;
import dev.parley.trace.export.OtlpSettings;
import dev.parley.trace.export.OtlpTraceExport;

import java.io.IOException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The hub's spans and its agents' turns, handed to the OTLP exporter: a {@code send} span per
 * committed envelope (its own span, under the caller's), with a {@code commit} span for the
 * group commit that made it durable, a {@code deliver} span when its receiver takes it, and an
 * {@code invoke_agent} span tree per ended turn. Only {@link OtlpTraceExport#offer} is done on
 * the paths that call in (the store's announcer thread among them): it never blocks, and what the
 * full queue cannot take is counted, not waited for.
 */
public final class HubTelemetry implements Notifier, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(HubTelemetry.class.getName());

    private final OtlpTraceExport export;
    private final OtlpSettings settings;
    private final InstantSource clock;
    // The commit whose batch the store's announcer is announcing: its length and its end
    // (System.nanoTime). Written and read on the announcer thread only.
    private long commitNanos;
    private long commitEndedAt = System.nanoTime();

    private HubTelemetry(OtlpTraceExport export, OtlpSettings settings, InstantSource clock) {
        this.export = export;
        this.settings = settings;
        this.clock = clock;
    }

    /** The telemetry {@code settings} ask for: none when export is off. */
    public static Optional<HubTelemetry> start(OtlpSettings settings, InstantSource clock) {
        return settings.enabled() ? Optional.of(new HubTelemetry(OtlpTraceExport.start(settings), settings, clock))
                : Optional.empty();
    }

    /** {@code metrics} told of each group commit, and this telemetry too (for the commit spans). */
    public CommitObserver observing(CommitObserver metrics) {
        return new CommitObserver() {
            @Override
            public void committed(int jobs, long nanos) {
                metrics.committed(jobs, nanos);
            }

            @Override
            public void announcing(long nanos, long endedAt) {
                commitNanos = nanos;
                commitEndedAt = endedAt;
            }

            @Override
            public void upkept(long nanos) {
                metrics.upkept(nanos);
            }
        };
    }

    @Override
    public void committed(Envelope envelope) {
        TraceContext span = envelope.trace().context();
        if (!settings.sampled(span.traceId())) {
            return;
        }
        // its commit ended a little before the announcer got to it: the spans end then
        Instant committed = clock.instant().minusNanos(Math.max(0, System.nanoTime() - commitEndedAt));
        Instant created = envelope.createdAt().isAfter(committed) ? committed : envelope.createdAt();
        Instant commitStart = committed.minusNanos(commitNanos);
        export.offer(HubSpan.of(HubSpan.Operation.SEND, span, created, committed, envelope));
        export.offer(HubSpan.of(HubSpan.Operation.COMMIT, span.child("commit"),
                commitStart.isBefore(created) ? created : commitStart, committed, envelope));
    }

    /** The receiver took {@code envelopes} at {@code at} (a stream, a poll, a webhook): each once. */
    @Override
    public void delivered(List<Envelope> envelopes, Instant at) {
        for (Envelope envelope : envelopes) {
            TraceContext span = envelope.trace().context();
            if (!settings.sampled(span.traceId())) {
                continue;
            }
            Instant start = envelope.createdAt().isAfter(at) ? at : envelope.createdAt();
            export.offer(HubSpan.of(HubSpan.Operation.DELIVER, span.child("deliver/" + envelope.trace().attempt()),
                    start, at, envelope));
        }
    }

    /** An agent's turn ended: its span tree, under the span of the envelope it worked. */
    public void turnEnded(Turn.WithEvents whole, EventStore envelopes) {
        Turn turn = whole.turn();
        if (!settings.sampled(turn.context().traceId())) {
            return;
        }
        List<TraceEvent> events = new ArrayList<>(whole.events().size());
        try {
            for (Turn.Event event : whole.events()) {
                events.add(TraceEvents.fromJson(Json.MAPPER.readTree(event.json())));
            }
        } catch (IOException | RuntimeException e) { // stored through the codec: only a bug gets here
            LOG.log(Level.WARNING, "turn " + turn.id() + " of " + turn.node() + " not exported", e);
            return;
        }
        Optional<String> conversation = envelopes.message(turn.envelopeId()).flatMap(r -> r.envelope().threadId())
                .or(() -> Optional.of(turn.context().traceId()));
        Optional<String> provider = turn.adapter().equals(ToolKinds.CLAUDE_CODE) ? Optional.of("anthropic")
                : Optional.empty();
        export.offer(new AgentTurn(turn.context(), turn.node(), conversation, turn.adapter(), provider,
                Optional.empty(), events));
    }

    /** The exporter, for its counts. */
    public OtlpTraceExport exporter() {
        return export;
    }

    @Override
    public void close() {
        export.close();
    }
}
