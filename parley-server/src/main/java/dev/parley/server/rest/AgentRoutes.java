package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.AgentSpec;
import dev.parley.core.Agents;
import dev.parley.core.Claim;
import dev.parley.core.Claims;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.server.agents.AgentRuntime;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;

import java.util.Map;
import java.util.Optional;

/**
 * {@code /v1/agents}: managed agents. Starting one creates its node (kind {@code managed}, the
 * caller its parent) with its spec; the admin and the agent's parent see, stop and restart it,
 * and read its log. Each view shows its restarts and, from the agent protocol's claims, the
 * latest heartbeat of the claims its node holds and the tool that heartbeat named.
 */
public final class AgentRoutes {
    private static final int DEFAULT_LOG_LINES = 200;
    private static final int MAX_LOG_LINES = 10_000;

    private final Agents agents;
    private final AgentRuntime runtime;
    private final Claims claims;

    public AgentRoutes(Agents agents, AgentRuntime runtime, Claims claims) {
        this.agents = agents;
        this.runtime = runtime;
        this.claims = claims;
    }

    public void register(Routes routes) {
        routes.post("/v1/agents", this::start)
                .get("/v1/agents", this::list)
                .get("/v1/agents/{id}", ex -> ex.json(200, view(run(visible(ex)))))
                .get("/v1/agents/{id}/spec", this::spec)
                .get("/v1/agents/{id}/logs", this::logs)
                .post("/v1/agents/{id}/stop", this::stop)
                .post("/v1/agents/{id}/restart", this::restart);
    }

    private void start(Exchange ex) {
        Principal caller = ex.caller();
        String text = ex.body().requiredString("spec");
        AgentSpec spec = agents.start(caller, text);
        runtime.adopt(spec, false, Optional.empty());
        ex.json(201, view(run(spec.id())));
    }

    private void list(Exchange ex) {
        Principal caller = ex.caller();
        Map<NodeId, Claim.Heartbeat> beats = claims.lastHeartbeats();
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        runtime.views().stream().filter(v -> agents.sees(caller, v.spec().id()))
                .forEach(v -> items.add(view(v, Optional.ofNullable(beats.get(v.spec().id())))));
        ex.json(200, out);
    }

    private void spec(Exchange ex) {
        NodeId id = run(visible(ex)).spec().id();
        ex.text("application/yaml", agents.spec(ex.caller(), id));
    }

    private void logs(Exchange ex) {
        NodeId id = run(visible(ex)).spec().id();
        int lines = (int) ex.longQuery("lines", 1, MAX_LOG_LINES, ErrorCode.INVALID_REQUEST).orElse(DEFAULT_LOG_LINES);
        ex.text("text/plain; charset=utf-8", String.join("\n", runtime.log(id, lines)) + "\n");
    }

    private void stop(Exchange ex) {
        NodeId id = run(visible(ex)).spec().id();
        ex.json(200, view(runtime.stop(id, () -> agents.stop(ex.caller(), id, true))));
    }

    private void restart(Exchange ex) {
        NodeId id = run(visible(ex)).spec().id();
        ex.json(200, view(runtime.restart(id, () -> agents.stop(ex.caller(), id, false))));
    }

    private NodeId visible(Exchange ex) {
        return agents.visible(ex.caller(), NodeId.of(ex.path("id")));
    }

    /** The agent as this hub runs it; one it does not run (another gateway's, one whose spec no longer holds) is not here. */
    private AgentRuntime.View run(NodeId id) {
        return runtime.view(id).orElseThrow(() -> new ParleyException(ErrorCode.NODE_NOT_FOUND, "agent " + id
                + " is not run by this hub"));
    }

    /** The agent's view with the latest heartbeat of its claims. */
    private ObjectNode view(AgentRuntime.View v) {
        return view(v, Optional.ofNullable(claims.lastHeartbeats().get(v.spec().id())));
    }

    private static ObjectNode view(AgentRuntime.View v, Optional<Claim.Heartbeat> beat) {
        AgentSpec spec = v.spec();
        ObjectNode out = Json.object();
        out.put("id", spec.id().value());
        out.put("parent", spec.parent().map(NodeId::value).orElse(null));
        out.put("runner", spec.runner().wire());
        out.put("wake", spec.wake().wire());
        var command = out.putArray("command");
        spec.command().forEach(command::add);
        out.put("idleTimeoutMs", spec.idleTimeout().toMillis());
        out.put("timeoutMs", spec.timeout().toMillis());
        ObjectNode limits = out.putObject("limits");
        spec.limits().memoryBytes().ifPresent(bytes -> limits.put("memoryBytes", bytes));
        spec.limits().cpuTime().ifPresent(cpu -> limits.put("cpuTimeSeconds", cpu.toSeconds()));
        spec.limits().openFiles().ifPresent(n -> limits.put("openFiles", n));
        out.put("state", v.state().wire());
        out.put("failure", v.failure().orElse(null));
        out.put("settled", v.settled());
        out.put("restarts", v.restarts());
        out.put("lastHeartbeatAt", beat.map(b -> Json.time(b.at())).orElse(null));
        out.put("currentTool", beat.flatMap(Claim.Heartbeat::tool).orElse(null));
        return out;
    }
}
