package dev.parley.trace.export;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.common.InstrumentationLibraryInfo;
import io.opentelemetry.sdk.common.InstrumentationScopeInfo;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.data.StatusData;

import java.util.List;

/**
 * A span that already happened, in the SDK's export shape: Parley's records carry their own ids
 * and times, so spans are made from them rather than started and ended through a tracer.
 */
record FinishedSpan(String name, SpanKind kind, SpanContext context, SpanContext parent, StatusData status,
                    long startNanos, long endNanos, Attributes attributes, List<EventData> events, Resource resource,
                    InstrumentationScopeInfo scope) implements SpanData {
    FinishedSpan {
        events = List.copyOf(events);
        endNanos = Math.max(startNanos, endNanos); // clocks of different hosts may disagree; a span never ends before it starts
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public SpanKind getKind() {
        return kind;
    }

    @Override
    public SpanContext getSpanContext() {
        return context;
    }

    @Override
    public SpanContext getParentSpanContext() {
        return parent;
    }

    @Override
    public StatusData getStatus() {
        return status;
    }

    @Override
    public long getStartEpochNanos() {
        return startNanos;
    }

    @Override
    public Attributes getAttributes() {
        return attributes;
    }

    @Override
    public List<EventData> getEvents() {
        return events;
    }

    @Override
    public List<LinkData> getLinks() {
        return List.of();
    }

    @Override
    public long getEndEpochNanos() {
        return endNanos;
    }

    @Override
    public boolean hasEnded() {
        return true;
    }

    @Override
    public int getTotalRecordedEvents() {
        return events.size();
    }

    @Override
    public int getTotalRecordedLinks() {
        return 0;
    }

    @Override
    public int getTotalAttributeCount() {
        return attributes.size();
    }

    @Override
    @SuppressWarnings("deprecation") // still abstract in the SDK's interface; the scope below is what is exported
    public InstrumentationLibraryInfo getInstrumentationLibraryInfo() {
        return InstrumentationLibraryInfo.create(scope.getName(), scope.getVersion());
    }

    @Override
    public InstrumentationScopeInfo getInstrumentationScopeInfo() {
        return scope;
    }

    @Override
    public Resource getResource() {
        return resource;
    }
}
