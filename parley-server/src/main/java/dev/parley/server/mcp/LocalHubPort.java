package dev.parley.server.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.Inboxes;
import dev.parley.core.Messages;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Payload;
import dev.parley.core.Peers;
import dev.parley.core.Principal;
import dev.parley.core.Registry;
import dev.parley.core.Router;
import dev.parley.core.SendRequest;
import dev.parley.core.TraceContext;
import dev.parley.mcp.HubPort;
import dev.parley.mcp.HubRefusal;
import dev.parley.server.http.Body;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.permission.Permissions;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The hub port of {@code POST /mcp}: the same calls the REST routes make — the router for
 * sends and replies, the message ledger for acks and status, the inboxes for polls — for
 * one caller, in-process, answering the REST contract's JSON. A refusal keeps its contract
 * code ({@code acl_denied}, {@code message_not_found}, ...).
 */
public final class LocalHubPort implements HubPort {

    /** What the port calls; one per hub. */
    public record Services(Router router, Messages messages, Registry registry, Inboxes inboxes, Peers peers,
                    Permissions permissions, Metrics metrics) {
    }

    private final Services hub;
    private final Principal caller;
    /** The caller's span from a tool call's _meta, over the one the HTTP request brought. */
    private final Optional<TraceContext> trace;

    LocalHubPort(Services hub, Principal caller) {
        this(hub, caller, Optional.empty());
    }

    private LocalHubPort(Services hub, Principal caller, Optional<TraceContext> trace) {
        this.hub = hub;
        this.caller = caller;
        this.trace = trace;
    }

    @Override
    public HubPort traced(String traceparent) {
        return new LocalHubPort(hub, caller, TraceContext.parse(traceparent));
    }

    @Override
    public JsonNode node(String id) {
        return call(() -> {
            Node node = hub.registry().show(caller, NodeId.of(id));
            return Views.node(node, hub.registry().children(node.id()), hub.registry().group(node),
                    hub.registry().gateway(node.id()));
        });
    }

    @Override
    public JsonNode send(ObjectNode request) {
        return call(() -> {
            Body body = new Body(request);
            SendRequest send = new SendRequest(NodeId.of(body.requiredString("to")),
                    body.string("kind").orElse(SendRequest.DEFAULT_KIND), payload(body, body.token("corrId")),
                    body.string("from"), body.longValue("replyWithinMs").map(Duration::ofMillis));
            return Views.accepted(hub.metrics().send(() -> hub.router().send(caller, send)));
        });
    }

    @Override
    public JsonNode reply(String id, ObjectNode request) {
        return call(() -> {
            Payload payload = payload(new Body(request), Optional.empty());
            return Views.accepted(hub.metrics().send(() -> hub.router().reply(caller, id, payload)));
        });
    }

    @Override
    public JsonNode ack(String id, ObjectNode request) {
        return call(() -> {
            Body body = new Body(request);
            DeliveryEvent event = switch (body.requiredString("status")) {
                case "processed" -> new DeliveryEvent.Processed();
                case "failed" -> new DeliveryEvent.Failed(body.string("reason").orElse(""));
                default -> throw Body.invalid("status must be processed or failed");
            };
            ObjectNode out = Json.object();
            out.put("id", id);
            out.put("state", hub.messages().ack(caller, id, event).wire());
            return out;
        });
    }

    @Override
    public JsonNode message(String id) {
        return call(() -> Views.message(hub.messages().status(caller, id)));
    }

    @Override
    public JsonNode inbox(long after, int limit) {
        return call(() -> Views.inboxPage(hub.inboxes().page(hub.inboxes().own(caller), after, limit)));
    }

    @Override
    public JsonNode permission(ObjectNode request) {
        return call(() -> {
            try {
                return hub.permissions().decide(caller, new Body(request));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new HubRefusal("interrupted", "the hub is shutting down", 0);
            }
        });
    }

    @Override
    public JsonNode peers() {
        return call(() -> Views.peers(hub.peers().self(caller), hub.peers().of(caller)));
    }

    private static Payload payload(Body body, Optional<String> corrId) {
        return new Payload(body.string("text"), body.rawJson("data"), corrId, body.token("threadId"),
                body.token("messageId"), body.stringMap("meta"));
    }

    private JsonNode call(Supplier<JsonNode> work) {
        try (var traced = trace.isPresent() ? TraceContext.enter(trace) : null) {
            return work.get();
        } catch (ParleyException e) {
            throw new HubRefusal(e.code().wire(), e.getMessage(), e.code().status());
        }
    }
}
