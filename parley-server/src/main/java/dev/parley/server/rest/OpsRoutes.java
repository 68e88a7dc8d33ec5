package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.AuditEntry;
import dev.parley.core.AuditLog;
import dev.parley.core.AuditQuery;
import dev.parley.core.AuditRecord;
import dev.parley.core.ErrorCode;
import dev.parley.core.FederationStatus;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.StoreHealth;
import dev.parley.core.VisibleAscii;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;

/** Health, metrics and the audit log. */
public final class OpsRoutes {
    /** The most entries one JSON answer (or one read of an export) holds. */
    private static final int MAX_PAGE = 1000;
    private static final int EXPORT_BUFFER = 16 * 1024;

    private final Supplier<StoreHealth> health;
    private final AuditLog auditLog;
    private final Metrics metrics;
    private final Supplier<Optional<FederationStatus>> federation;

    public OpsRoutes(Supplier<StoreHealth> health, AuditLog auditLog, Metrics metrics) {
        this(health, auditLog, metrics, Optional::empty);
    }

    /** With the gateway's federation status shown by {@code /healthz}. */
    public OpsRoutes(Supplier<StoreHealth> health, AuditLog auditLog, Metrics metrics,
                     Supplier<Optional<FederationStatus>> federation) {
        this.federation = federation;
        this.health = health;
        this.auditLog = auditLog;
        this.metrics = metrics;
    }

    public void register(Routes routes) {
        routes.get("/healthz", this::health)
                .get("/metrics", this::metrics)
                .get("/v1/audit", this::audit);
    }

    /**
     * {@code {"status":"ok"}}, or 503 {@code {"status":"degraded","store":"full"}} while writes fail; reads still
     * work. A gateway adds {@code "federation": {"gateway","mode":"connected"|"spooling","spoolDepth"}}: spooling
     * is not degraded, as local traffic goes on and the spool drains once NATS is back.
     */
    private void health(Exchange ex) {
        StoreHealth now = health.get();
        ObjectNode out = Json.object();
        federation.get().ifPresent(f -> {
            ObjectNode fed = Json.object();
            fed.put("gateway", f.gateway());
            fed.put("mode", f.mode());
            fed.put("spoolDepth", f.spoolDepth());
            out.set("federation", fed);
        });
        if (now == StoreHealth.OK) {
            out.put("status", "ok");
            ex.json(200, out);
            return;
        }
        out.put("status", "degraded");
        out.put("store", now.wire());
        ex.json(503, out);
    }

    /** Loopback scrapers need no token; anyone else needs the admin's. */
    private void metrics(Exchange ex) {
        if (!ex.fromLoopback() && !(ex.caller() instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "metrics are for the admin or loopback");
        }
        ex.text("text/plain; version=0.0.4; charset=utf-8", metrics.render());
    }

    /**
     * The audit log, newest first, filtered by node, decision, rule, action and time
     * ({@code since} inclusive, {@code until} exclusive, RFC 3339); paged with {@code before=<id>}
     * ({@code next} in the answer). {@code format=jsonl} answers JSON Lines instead: one entry
     * a line, every entry matched unless {@code limit} is given, streamed as it is read.
     */
    private void audit(Exchange ex) throws IOException {
        Principal caller = ex.caller();
        Optional<String> node = ex.query("node").map(n -> NodeId.of(n).value());
        Optional<AuditEntry.Decision> decision = ex.query("decision").map(d -> switch (d) {
            case "allow" -> AuditEntry.Decision.ALLOW;
            case "deny" -> AuditEntry.Decision.DENY;
            default -> throw new ParleyException(ErrorCode.INVALID_REQUEST, "decision must be allow or deny");
        });
        Optional<String> rule = ex.query("rule").map(r -> word("rule", r));
        Optional<String> action = ex.query("action").map(a -> word("action", a));
        Optional<Instant> since = ex.query("since").map(t -> time("since", t));
        Optional<Instant> until = ex.query("until").map(t -> time("until", t));
        OptionalLong before = ex.longQuery("before", 1, Long.MAX_VALUE, ErrorCode.INVALID_REQUEST);
        String format = ex.query("format").orElse("json");
        boolean lines = switch (format) {
            case "json" -> false;
            case "jsonl" -> true;
            default -> throw new ParleyException(ErrorCode.INVALID_REQUEST, "format must be json or jsonl");
        };
        OptionalLong limit = ex.longQuery("limit", 1, lines ? Integer.MAX_VALUE : MAX_PAGE, ErrorCode.INVALID_REQUEST);
        AuditQuery query = new AuditQuery(node, decision, rule, action, since, until,
                before.isPresent() ? Optional.of(before.getAsLong()) : Optional.empty(), (int) limit.orElse(100));
        if (lines) {
            exportLines(ex, caller, query, limit.isPresent() ? limit.getAsLong() : Long.MAX_VALUE);
            return;
        }
        List<AuditRecord> records = auditLog.read(caller, query);
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        records.forEach(r -> items.add(Views.audit(r)));
        out.put("next", records.size() == query.limit() ? records.getLast().id() : null);
        ex.json(200, out);
    }

    /**
     * Writes every matching entry, a page at a time, as JSON Lines. The first page is read
     * before the answer starts, so that a refusal still gets its own status.
     */
    private void exportLines(Exchange ex, Principal caller, AuditQuery query, long limit) throws IOException {
        AuditQuery page = query.limit((int) Math.min(MAX_PAGE, limit));
        List<AuditRecord> records = auditLog.read(caller, page);
        // Many small writes: buffered here, as the server buffers no output stream (see Hub).
        try (OutputStream out = new BufferedOutputStream(ex.stream("application/x-ndjson"), EXPORT_BUFFER)) {
            long written = 0;
            while (true) {
                for (AuditRecord record : records) {
                    out.write(Json.bytes(Views.audit(record)));
                    out.write('\n');
                }
                written += records.size();
                if (records.size() < page.limit() || written >= limit) {
                    break;
                }
                page = page.before(records.getLast().id()).limit((int) Math.min(MAX_PAGE, limit - written));
                records = auditLog.read(caller, page);
            }
        }
    }

    private static String word(String name, String value) {
        if (!VisibleAscii.within(value, 128)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, name + " must be 1 to 128 printable ASCII characters");
        }
        return value;
    }

    private static Instant time(String name, String value) {
        try {
            return OffsetDateTime.parse(value).toInstant();
        } catch (DateTimeParseException e) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, name
                    + " must be an RFC 3339 time such as 2026-11-22T10:00:00.000Z");
        }
    }
}
