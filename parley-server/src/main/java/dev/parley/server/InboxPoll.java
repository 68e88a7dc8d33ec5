package dev.parley.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.DeliveryPolicies;
import dev.parley.core.Envelope;
import dev.parley.core.EventStore;
import dev.parley.core.NodeId;

import java.time.InstantSource;
import java.util.List;

/**
 * One page of an inbox for a client that polls ({@code GET /v1/inbox}, the admin's
 * {@code GET /v1/nodes/{id}/inbox}, the MCP {@code inbox} tool). The owner's poll marks the
 * page delivered before it is answered, so the states it reads next are already true.
 */
record InboxPoll(EventStore store, DeliveryPolicies policies, InstantSource clock) {

    /** {@code {"items":[…],"next":seq}}. */
    ObjectNode page(NodeId node, InboxReader reader, long after, int limit) {
        List<Envelope> items = store.inboxAfter(node, after, limit);
        if (reader.takesDelivery()) {
            store.markDeliveredNow(items, clock.instant(), policies.of(node).redeliverAfter());
        }
        ObjectNode out = Json.object();
        var array = out.putArray("items");
        items.forEach(e -> array.add(Json.envelopeTree(e)));
        out.put("next", items.isEmpty() ? after : items.getLast().seq());
        return out;
    }
}
