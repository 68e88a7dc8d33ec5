package dev.parley.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.AuditEntry;
import dev.parley.core.AuditQuery;
import dev.parley.core.ErrorCode;
import dev.parley.core.EventStore;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;

import java.util.Optional;

/** Health, metrics and the audit log. */
final class OpsRoutes {
    private final EventStore store;
    private final Metrics metrics;

    OpsRoutes(EventStore store, Metrics metrics) {
        this.store = store;
        this.metrics = metrics;
    }

    void register(Routes routes) {
        routes.get("/healthz", this::health)
                .get("/metrics", this::metrics)
                .get("/v1/audit", this::audit);
    }

    private void health(Exchange ex) {
        ObjectNode out = Json.object();
        out.put("status", "ok");
        ex.json(200, out);
    }

    /** Loopback scrapers need no token; anyone else needs the admin's. */
    private void metrics(Exchange ex) {
        if (!ex.fromLoopback() && !(ex.caller() instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "metrics are for the admin or loopback");
        }
        ex.text("text/plain; version=0.0.4; charset=utf-8", metrics.render());
    }

    private void audit(Exchange ex) {
        if (!(ex.caller() instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may read the audit log");
        }
        Optional<String> node = ex.query("node").map(n -> NodeId.of(n).value());
        Optional<AuditEntry.Decision> decision = ex.query("decision").map(d -> switch (d) {
            case "allow" -> AuditEntry.Decision.ALLOW;
            case "deny" -> AuditEntry.Decision.DENY;
            default -> throw new ParleyException(ErrorCode.INVALID_REQUEST, "decision must be allow or deny");
        });
        int limit = (int) ex.longQuery("limit", 1, 1000, ErrorCode.INVALID_REQUEST).orElse(100);
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        store.audit(new AuditQuery(node, decision, limit)).forEach(r -> items.add(Views.audit(r)));
        ex.json(200, out);
    }
}
