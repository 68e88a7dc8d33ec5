package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Admission;
import dev.parley.core.CreatedNode;
import dev.parley.core.NewNode;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.NodeKind;
import dev.parley.core.Principal;
import dev.parley.core.Registry;
import dev.parley.core.Routing;
import dev.parley.server.delivery.InboxFeeds;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

/** {@code /v1/nodes}: register, list, show, delete nodes, rotate their tokens, route them across gateways. */
public final class NodeRoutes {
    private final Registry registry;
    private final InboxFeeds feeds;

    /** Admission: a node admitted with a public key proves it to rotate its own token. */
    private final Admission admission;

    public NodeRoutes(Registry registry, InboxFeeds feeds, Admission admission) {
        this.registry = registry;
        this.feeds = feeds;
        this.admission = admission;
    }

    public void register(Routes routes) {
        routes.post("/v1/nodes", this::create)
                .get("/v1/nodes", this::list)
                .get("/v1/nodes/{id}", this::show)
                .delete("/v1/nodes/{id}", this::delete)
                .post("/v1/nodes/{id}/token", this::rotate)
                .get("/v1/nodes/{id}/routing", this::routing)
                .put("/v1/nodes/{id}/routing", this::route);
    }

    private void create(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        NewNode request = new NewNode(NodeId.of(body.requiredString("id")),
                body.string("kind").map(NodeKind::parse).orElse(NodeKind.EXTERNAL), body.nodeId("parent"),
                body.stringMap("labels"));
        CreatedNode created = registry.create(caller, request);
        ObjectNode out = view(created.node());
        out.remove("children");
        out.put("token", created.token());
        ex.json(201, out);
    }

    private void list(Exchange ex) {
        var caller = ex.caller();
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        registry.list(caller).forEach(n -> items.add(view(n)));
        ex.json(200, out);
    }

    private void show(Exchange ex) {
        var caller = ex.caller();
        ex.json(200, view(registry.show(caller, ex.pathNode())));
    }

    private void delete(Exchange ex) {
        var caller = ex.caller();
        NodeId id = ex.pathNode();
        registry.delete(caller, id);
        feeds.close(id);
        ex.noContent();
    }

    private void rotate(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        admission.checkRotation(caller, ex.pathNode(), body.token("nonce"), body.string("proof"));
        ObjectNode out = Json.object();
        out.put("token", registry.rotateToken(caller, ex.pathNode()));
        ex.json(200, out);
    }

    /** {@code {"fallbacks": ["b", "c"]}} (admin, on the node's owner) → 200 the routing, as {@code GET} shows it. */
    private void route(Exchange ex) {
        Principal caller = ex.caller();
        Body body = ex.body();
        if (!body.json().hasNonNull("fallbacks")) {
            throw Body.invalid("field 'fallbacks' is required: the gateway ids, in order ([] for none)");
        }
        ex.json(200, routingView(registry.route(caller, ex.pathNode(), body.strings("fallbacks"))));
    }

    private void routing(Exchange ex) {
        Principal caller = ex.caller();
        ex.json(200, routingView(registry.routing(caller, ex.pathNode())));
    }

    private static ObjectNode routingView(Routing routing) {
        ObjectNode out = Json.object();
        out.put("node", routing.node().value());
        out.put("owner", routing.owner());
        var fallbacks = out.putArray("fallbacks");
        routing.fallbacks().forEach(fallbacks::add);
        return out;
    }

    private ObjectNode view(Node node) {
        return Views.node(node, registry.children(node.id()), registry.group(node), registry.gateway(node.id()));
    }
}
