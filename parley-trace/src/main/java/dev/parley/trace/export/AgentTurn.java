package dev.parley.trace.export;

import dev.parley.core.TraceContext;
import dev.parley.core.NodeId;
import dev.parley.trace.TraceEvent;

import java.util.List;
import java.util.Optional;

/**
 * One turn of an agent, as its adapter recorded it: exported as an {@code invoke_agent} span
 * (under the span of the envelope that started it) with an {@code execute_tool} span per tool call.
 *
 * @param agent          the agent's node
 * @param conversationId the conversation the turn belongs to, when known
 * @param adapter        the adapter that ran the turn ({@code claude-code}, {@code command}, …)
 * @param provider       the model provider ({@code anthropic}, …) when the adapter knows it
 * @param requestModel   the model the agent was configured to ask for, when known
 * @param events         the turn's events in order; at least one
 */
public record AgentTurn(TraceContext ids, NodeId agent, Optional<String> conversationId, String adapter,
                        Optional<String> provider, Optional<String> requestModel, List<TraceEvent> events)
        implements Exportable {
    public AgentTurn {
        if (ids == null || agent == null || adapter == null || adapter.isBlank()) {
            throw new IllegalArgumentException("an agent turn needs its ids, agent and adapter");
        }
        events = List.copyOf(events);
        if (events.isEmpty()) {
            throw new IllegalArgumentException("an agent turn has at least one event");
        }
    }
}
