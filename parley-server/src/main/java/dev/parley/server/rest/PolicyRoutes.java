package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.AccessPolicy;
import dev.parley.core.AclDecision;
import dev.parley.core.ErrorCode;
import dev.parley.core.Graph;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.RuleInput;
import dev.parley.core.SendRequest;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.policy.LivePolicy;
import dev.parley.server.wire.Json;

import java.time.InstantSource;

/** {@code /v1/policy}: the rules in force, and a dry run of the access decision. */
public final class PolicyRoutes {

    private final LivePolicy live;
    private final AccessPolicy dryRun;
    private final Graph graph;
    private final InstantSource clock;

    /** {@code dryRun} decides as every send does, over rules that are not counted in the metrics. */
    public PolicyRoutes(LivePolicy live, AccessPolicy dryRun, Graph graph, InstantSource clock) {
        this.live = live;
        this.dryRun = dryRun;
        this.graph = graph;
        this.clock = clock;
    }

    public void register(Routes routes) {
        routes.get("/v1/policy", this::show)
                .post("/v1/policy/check", this::check);
    }

    private void show(Exchange ex) {
        if (!(ex.caller() instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may read the policy");
        }
        ex.json(200, view(live.state()));
    }

    /**
     * The decision a send from {@code from} to {@code to} of {@code kind} would get now, with
     * nothing written. The admin may ask about anyone; a node only about itself as sender.
     */
    private void check(Exchange ex) {
        Principal caller = ex.caller();
        Body body = ex.body();
        NodeId from = NodeId.of(body.requiredString("from"));
        NodeId to = NodeId.of(body.requiredString("to"));
        String kind = SendRequest.requireKind(body.string("kind").orElse(SendRequest.DEFAULT_KIND));
        if (caller instanceof Principal.Caller c && !c.id().equals(from)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "a node may check only its own sends (from must be "
                    + c.id() + ")");
        }
        Node sender = graph.node(from).orElseThrow(() -> notFound(from));
        Node target = graph.node(to).orElseThrow(() -> notFound(to));
        long textSize = body.longValue("textSize").orElse(0L);
        if (textSize < 0) {
            throw Body.invalid("textSize must not be negative");
        }
        RuleInput.EnvelopeFacts facts = new RuleInput.EnvelopeFacts(kind, textSize, body.stringMap("meta"),
                body.string("topic").orElse(""));
        AclDecision decision = dryRun.decide(sender, target, facts, clock.instant());
        ObjectNode out = Json.object();
        switch (decision) {
            case AclDecision.Allowed allowed -> {
                out.put("decision", "allow");
                out.put("reason", allowed.why());
                out.put("rule", allowed.rule().orElse(null));
                out.put("policyVersion", allowed.policyVersion());
                out.put("route", allowed.route().wire());
            }
            case AclDecision.Denied denied -> {
                out.put("decision", "deny");
                out.put("reason", denied.reason());
                out.put("rule", denied.rule().orElse(null));
                out.put("policyVersion", denied.policyVersion());
                out.putNull("route");
            }
        }
        ex.json(200, out);
    }

    private static ParleyException notFound(NodeId id) {
        return new ParleyException(ErrorCode.NODE_NOT_FOUND, "node " + id + " does not exist");
    }

    private static ObjectNode view(LivePolicy.State state) {
        ObjectNode out = Json.object();
        out.put("version", state.version());
        var rules = out.putArray("rules");
        state.document().rules().forEach(r -> rules.addObject().put("name", r.name()).put("effect", r.effect().wire())
                .put("when", r.when()));
        var permissions = out.putArray("permissions");
        state.document().permissions().forEach(r -> permissions.addObject().put("name", r.name())
                .put("effect", r.effect().wire()).put("when", r.when()));
        out.put("source", state.source().map(p -> p.toAbsolutePath().toString()).orElse(null));
        out.put("loadedAt", state.loadedAt().map(Json::time).orElse(null));
        if (state.lastError().isEmpty()) {
            out.putNull("lastError");
        } else {
            LivePolicy.LoadError error = state.lastError().get();
            ObjectNode e = out.putObject("lastError");
            e.put("at", Json.time(error.at()));
            e.put("message", error.message());
            var problems = e.putArray("problems");
            error.problems().forEach(p -> problems.addObject()
                    .put("index", p.index().orElse(null))
                    .put("rule", p.rule().orElse(null))
                    .put("error", p.error()));
        }
        return out;
    }
}
