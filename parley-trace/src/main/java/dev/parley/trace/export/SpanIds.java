package dev.parley.trace.export;

import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.TraceId;

import java.util.Optional;

/**
 * Where a span sits: its trace (32 lowercase hex digits), its own id and its parent's (16 lowercase
 * hex digits, not all zero), the W3C {@code traceparent} shapes.
 */
public record SpanIds(String traceId, String spanId, Optional<String> parentSpanId) {
    public SpanIds {
        if (traceId == null || !TraceId.isValid(traceId)) {
            throw new IllegalArgumentException("traceId: 32 lowercase hex digits, not all zero");
        }
        if (spanId == null || !SpanId.isValid(spanId)) {
            throw new IllegalArgumentException("spanId: 16 lowercase hex digits, not all zero");
        }
        if (parentSpanId == null || parentSpanId.isPresent() && !SpanId.isValid(parentSpanId.get())) {
            throw new IllegalArgumentException("parentSpanId: 16 lowercase hex digits, not all zero, or absent");
        }
    }
}
