package dev.parley.trace.export;

/** What the hub hands to {@link OtlpTraceExport#offer}: a span of its own, or an agent's turn. */
public sealed interface Exportable permits HubSpan, AgentTurn {
}
