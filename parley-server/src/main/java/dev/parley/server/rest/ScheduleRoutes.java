package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Schedule;
import dev.parley.core.Schedules;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

import java.util.regex.Pattern;

/**
 * {@code /v1/schedules}: the scheduled sends a node made (all of them for the admin), one by id,
 * and canceling one. They are created by {@code POST /v1/messages} with {@code deliverAt} or
 * {@code cron} ({@link MessageRoutes}).
 */
public final class ScheduleRoutes {
    /** Schedule ids are UUIDs; anything else cannot name one. */
    private static final Pattern SCHEDULE_ID = Pattern.compile("^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$");
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1000;

    private final Schedules schedules;

    public ScheduleRoutes(Schedules schedules) {
        this.schedules = schedules;
    }

    public void register(Routes routes) {
        routes.get("/v1/schedules", this::list)
                .get("/v1/schedules/{sid}", this::show)
                .delete("/v1/schedules/{sid}", this::cancel);
    }

    private void list(Exchange ex) {
        var caller = ex.caller();
        int limit = (int) ex.longQuery("limit", 1, MAX_LIMIT, ErrorCode.INVALID_REQUEST).orElse(DEFAULT_LIMIT);
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        schedules.list(caller, ex.query("sender").map(NodeId::of), ex.query("state").map(Schedule.State::parse), limit)
                .forEach(s -> items.add(Views.schedule(s, false)));
        ex.json(200, out);
    }

    private void show(Exchange ex) {
        var caller = ex.caller();
        ex.json(200, Views.schedule(schedules.show(caller, scheduleId(ex)), false));
    }

    private void cancel(Exchange ex) {
        var caller = ex.caller();
        schedules.cancel(caller, scheduleId(ex));
        ex.noContent();
    }

    private static String scheduleId(Exchange ex) {
        String id = ex.path("sid");
        if (!SCHEDULE_ID.matcher(id).matches()) {
            throw new ParleyException(ErrorCode.SCHEDULE_NOT_FOUND, "schedule " + id + " does not exist");
        }
        return id;
    }
}
