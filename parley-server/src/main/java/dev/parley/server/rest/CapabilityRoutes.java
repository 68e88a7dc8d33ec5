package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Capabilities;
import dev.parley.core.Capability;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.Task;
import dev.parley.core.Tasks;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * {@code /v1/capabilities}: publish a capability (its owner, the owner's parent or the admin),
 * read the catalog (any node), withdraw it, and read the reviews its misfires raised.
 */
public final class CapabilityRoutes {
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1000;

    private final Capabilities capabilities;
    private final Tasks tasks;

    public CapabilityRoutes(Capabilities capabilities, Tasks tasks) {
        this.capabilities = capabilities;
        this.tasks = tasks;
    }

    public void register(Routes routes) {
        routes.post("/v1/capabilities", this::publish)
                .get("/v1/capabilities", this::catalog)
                .get("/v1/capabilities/{cid}", ex -> ex.json(200, Views.capability(capabilities.published(ex.path("cid")))))
                .delete("/v1/capabilities/{cid}", this::unpublish)
                .get("/v1/capabilities/{cid}/reviews", this::reviews);
    }

    /**
     * Publishes, then hands the delegation skill to the other active agents as
     * {@code skill_distribution} tasks; the answer says which tasks were created.
     */
    private void publish(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        long eta = body.longValue("etaSeconds").orElse(Capability.DEFAULT_ETA.toSeconds());
        if (eta < 1 || eta > Duration.ofDays(7).toSeconds()) {
            throw Body.invalid("etaSeconds must be between 1 and 604800 (7 days)");
        }
        Capability declared = new Capability(body.requiredString("capabilityId"), NodeId.of(body.requiredString("owner")),
                skill(body, "delegationSkill"), skill(body, "executorSkill"), body.rawJson("contract"),
                Duration.ofSeconds(eta), Instant.EPOCH);
        Capabilities.Published published = capabilities.publish(caller, declared);
        List<Task> distributed = tasks.distribute(caller, published);
        ObjectNode out = Views.capability(published.capability());
        var items = out.putArray("distributionTasks");
        distributed.forEach(t -> items.addObject().put("id", t.id()).put("assignee", t.assignee().value()));
        ex.json(201, out);
    }

    private void catalog(Exchange ex) {
        ex.caller(); // any node may read the catalog; only a caller with a token
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        capabilities.catalog().forEach(c -> items.add(Views.capability(c)));
        ex.json(200, out);
    }

    private void unpublish(Exchange ex) {
        capabilities.unpublish(ex.caller(), ex.path("cid"));
        ex.noContent();
    }

    private void reviews(Exchange ex) {
        var caller = ex.caller();
        int limit = (int) ex.longQuery("limit", 1, MAX_LIMIT, ErrorCode.INVALID_REQUEST).orElse(DEFAULT_LIMIT);
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        capabilities.reviews(caller, ex.path("cid"), limit).forEach(r -> items.add(Views.skillReview(r)));
        ex.json(200, out);
    }

    /** {@code {"ref", "version"}}, both required. */
    private static Capability.SkillRef skill(Body body, String field) {
        Body skill = body.object(field).orElseThrow(() -> Body.invalid("field '" + field + "' is required: {\"ref\","
                + " \"version\"}"));
        return new Capability.SkillRef(skill.requiredString("ref"), skill.requiredString("version"));
    }
}
