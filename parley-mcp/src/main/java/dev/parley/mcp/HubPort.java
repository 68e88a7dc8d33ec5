package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The hub as the MCP tools see it, acting as one node. Every method answers the JSON body
 * the REST contract gives for the same call ({@code API.md}), so the tools read one shape
 * whether the hub is reached over HTTP (the stdio bridge) or in-process (the hub's own
 * {@code POST /mcp}). A refusal or a failure to reach the hub is a {@link HubRefusal}.
 */
public interface HubPort {

    /** {@code GET /v1/nodes/{id}}. */
    JsonNode node(String id);

    /** {@code POST /v1/messages} with the contract's send body. */
    JsonNode send(ObjectNode request);

    /** {@code POST /v1/messages/{id}/reply}. */
    JsonNode reply(String id, ObjectNode body);

    /** {@code POST /v1/messages/{id}/ack}. */
    JsonNode ack(String id, ObjectNode body);

    /** {@code GET /v1/messages/{id}}: the envelope with its state and timeline. */
    JsonNode message(String id);

    /** {@code GET /v1/inbox?after=&limit=}: {@code {"items":[…],"next":seq}}. */
    JsonNode inbox(long after, int limit);

    /**
     * {@code POST /v1/permissions}: the hub decides whether this node may call a tool,
     * holding the call until then (at most the request's {@code timeoutMs}).
     */
    JsonNode permission(ObjectNode request);

    /** {@code GET /v1/peers}: {@code {"node":me,"items":[…]}}, the nodes this node may send to and why. */
    JsonNode peers();

    /**
     * The same hub, with {@code traceparent} (W3C, from a tool call's {@code _meta}) as the
     * caller's span for the calls made through the answer; a port that cannot carry it ignores it.
     */
    default HubPort traced(String traceparent) {
        return this;
    }
}
