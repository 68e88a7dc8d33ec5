package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Scheduled sends: a send that fires at {@code deliverAt} or on a cron expression, read in a
 * time zone and stored in UTC. The access decision (policy rules around the ACL, the schema) is
 * taken when the schedule is created — a refusal is audited and nothing is stored — and again
 * each time it fires, since policy may have changed: a refused firing is audited and skipped
 * (a one-shot then ends as failed). Each firing appends its envelope and moves the schedule on
 * in one transaction, so an occurrence fires at most once, however often a pass runs and
 * whatever crashes. The sender is the caller, as for every send; it also stands as the actor
 * of each firing.
 */
public final class Schedules {
    /** The most active schedules one sender may have. */
    public static final int MAX_ACTIVE = 1000;
    /** The node label that names a recipient's time zone (IANA), read when a schedule names none. */
    public static final String ZONE_LABEL = "timezone";
    /** Meta set on each fired envelope: the schedule it came from, and the occurrence it stands for (RFC 3339 UTC). */
    public static final String SCHEDULE_META = "parley.schedule";
    public static final String OCCURRENCE_META = "parley.occurrence";
    private static final int BATCH = 256;
    private static final ZoneId UTC = ZoneId.of("UTC");
    private static final Set<String> ZONES = ZoneId.getAvailableZoneIds();

    /** A schedule created, or the first one with the same messageId. */
    public record Created(Schedule schedule, boolean duplicate) {
    }

    /** What one pass did, and when the next schedule is due. */
    public record Pass(int fired, int skipped, Optional<Instant> nextDue) {
    }

    private final Graph graph;
    private final AccessPolicy policy;
    private final PostOffice office;
    private final ScheduleStore schedules;
    private final EventStore store;
    private final Recurrences crons;
    private final InstantSource clock;
    private final IdGenerator ids;
    /** Told when schedules were created or canceled: the next one due may have changed. */
    private final Runnable changed;

    public Schedules(Graph graph, AccessPolicy policy, PayloadSchemas schemas, ScheduleStore schedules, EventStore store,
                     Recurrences crons, InstantSource clock, IdGenerator ids, Runnable changed) {
        this.graph = graph;
        this.policy = policy;
        this.office = new PostOffice(graph, policy, schemas, ids);
        this.schedules = schedules;
        this.store = store;
        this.crons = crons;
        this.clock = clock;
        this.ids = ids;
        this.changed = changed;
    }

    /**
     * Schedules {@code request} for the node {@code caller} acts as. Every refusal past the
     * caller's identity is audited ({@code schedule.create}): bad input, the access decision,
     * the limit of active schedules.
     */
    public Created create(Principal caller, ScheduleRequest request) {
        SendRequest send = request.send();
        Node sender = send.sender(caller, graph);
        Optional<String> messageId = send.payload().messageId();
        if (messageId.isPresent()) {
            Optional<Schedule> earlier = schedules.scheduled(sender.id(), messageId.get());
            if (earlier.isPresent()) {
                return new Created(earlier.get(), true);
            }
        }
        Actor actor = Actor.of(caller, "schedule.create", clock.instant());
        String target = send.to().value();
        if (request.deliverAt().isPresent() == request.cron().isPresent()) {
            throw refuse(actor, target, ErrorCode.INVALID_REQUEST, "a scheduled send has either deliverAt or cron, not "
                    + (request.cron().isPresent() ? "both" : "neither"));
        }
        ZoneId zone = zone(actor, send.to(), request.timeZone());
        Timing timing;
        Instant first;
        try {
            timing = request.cron().<Timing>map(Timing.Cron::new).orElseGet(() -> Timing.Once.parse(request.deliverAt().get()));
            first = switch (timing) {
                case Timing.Once once -> future(once, zone, actor.at());
                case Timing.Cron cron -> occurrences(cron, zone).next(actor.at()).orElseThrow(() -> new ParleyException(
                        ErrorCode.INVALID_REQUEST, "cron \"" + cron.expression() + "\" names no time from now on"));
            };
        } catch (ParleyException e) {
            throw refuse(actor, target, e.code(), e.getMessage());
        }
        Draft draft = Draft.direct(sender.id(), send.kind(), send.payload());
        AclDecision.Allowed allowed = switch (office.judge(actor, sender, send.to(), draft)) {
            case PostOffice.Verdict.Refused refused -> {
                store.audit(refused.audit());
                throw refused.refusal();
            }
            case PostOffice.Verdict.Allowed a -> a.decision();
        };
        office.check(draft);
        Schedule schedule = new Schedule(ids.next(), sender.id(), send.to(), send.kind(), send.payload(),
                send.replyWithin(), timing, zone, actor.at(), Schedule.State.ACTIVE, Optional.of(first), 0, 0,
                Optional.empty(), Optional.empty(), Optional.empty());
        AuditEntry allowance = actor.allow(target, "schedule " + schedule.id() + " (" + allowed.why() + ")",
                Optional.empty(), allowed.policyVersion(), allowed.rule());
        Created created;
        try {
            created = schedules.create(schedule, MAX_ACTIVE, allowance);
        } catch (ParleyException e) {
            if (e.code() == ErrorCode.SCHEDULE_LIMIT) {
                store.audit(actor.deny(target, e.getMessage(), allowed.policyVersion()));
            }
            throw e;
        }
        changed.run();
        return created;
    }

    /** A schedule the caller may see: its sender's, or any for the admin; to others it does not exist. */
    public Schedule show(Principal caller, String id) {
        return schedules.schedule(id).filter(s -> visible(caller, s)).orElseThrow(() -> notFound(id));
    }

    /**
     * Schedules newest first: the caller's own, or, for the admin, everyone's (or {@code sender}'s).
     * A node asking for another sender's is refused.
     */
    public List<Schedule> list(Principal caller, Optional<NodeId> sender, Optional<Schedule.State> state, int limit) {
        Optional<NodeId> of = switch (caller) {
            case Principal.Admin a -> sender;
            case Principal.Caller c -> {
                if (sender.isPresent() && !sender.get().equals(c.id())) {
                    throw new ParleyException(ErrorCode.FORBIDDEN, "a node lists only its own schedules");
                }
                yield Optional.of(c.id());
            }
        };
        return schedules.schedules(of, state, limit);
    }

    /**
     * Cancels a schedule: its sender or the admin; audited ({@code schedule.cancel}). Canceling
     * a canceled schedule changes nothing; one that ended otherwise is {@code invalid_transition}.
     */
    public void cancel(Principal caller, String id) {
        Schedule schedule = show(caller, id);
        Instant now = clock.instant();
        AuditEntry audit = new AuditEntry(now, caller.name(), "schedule.cancel", schedule.to().value(),
                AuditEntry.Decision.ALLOW, "schedule " + id + " canceled", Optional.empty(), policy.version());
        if (schedules.cancel(id, now, audit)) {
            changed.run();
            return;
        }
        Schedule.State state = schedules.schedule(id).orElseThrow().state();
        if (state != Schedule.State.CANCELED) {
            throw new ParleyException(ErrorCode.INVALID_TRANSITION, "schedule " + id + " already ended (" + state.wire()
                    + ")");
        }
    }

    /** The earliest next firing of any active schedule. */
    public Optional<Instant> nextDue() {
        return schedules.nextDue();
    }

    /**
     * Fires every schedule due at {@code now}. A schedule that missed occurrences (the hub was
     * down, or a pass late) fires once, for the latest of them, and moves on to its first
     * occurrence after {@code now}.
     */
    public Pass fire(Instant now) {
        int fired = 0;
        int skipped = 0;
        List<Schedule> due;
        do {
            due = schedules.due(now, BATCH);
            for (Schedule schedule : due) {
                switch (fire(schedule, now)) {
                    case FIRED -> fired++;
                    case SKIPPED -> skipped++;
                    case MOVED_ON -> { }
                }
            }
        } while (due.size() == BATCH);
        return new Pass(fired, skipped, schedules.nextDue());
    }

    private enum Firing { FIRED, SKIPPED, MOVED_ON }

    private Firing fire(Schedule schedule, Instant now) {
        Instant due = schedule.nextAt().orElseThrow();
        Actor actor = new Actor(schedule.from().value(), "schedule.fire", now);
        Optional<Occurrences> cron;
        try {
            cron = switch (schedule.timing()) {
                case Timing.Cron c -> Optional.of(occurrences(c, schedule.zone()));
                case Timing.Once once -> Optional.empty();
            };
        } catch (ParleyException e) { // stored before a change of the cron library: it cannot fire
            return skip(schedule, due, Optional.empty(), actor.deny(schedule.to().value(), "schedule " + schedule.id()
                    + ": " + e.getMessage(), policy.version()));
        }
        Instant occurrence = cron.map(o -> o.latest(due, now)).orElse(due);
        Optional<Instant> next = cron.flatMap(o -> o.next(occurrence));
        String about = "schedule " + schedule.id() + ", occurrence " + occurrence;
        Optional<Node> sender = graph.node(schedule.from());
        if (sender.isEmpty()) {
            return skip(schedule, due, Optional.empty(), actor.deny(schedule.to().value(), about
                    + ": its sender no longer exists", policy.version()));
        }
        Draft draft = Draft.direct(schedule.from(), schedule.kind(), payload(schedule, occurrence));
        return switch (office.judge(actor, sender.get(), schedule.to(), draft)) {
            case PostOffice.Verdict.Refused refused -> {
                // a recipient that is gone is gone for good (ids are never reused): nothing more to fire
                boolean gone = refused.refusal().code() == ErrorCode.NODE_NOT_FOUND;
                yield skip(schedule, due, gone ? Optional.empty() : next, refused.audit().about(about));
            }
            case PostOffice.Verdict.Allowed allowed -> {
                try {
                    office.check(draft);
                } catch (ParleyException e) {
                    yield skip(schedule, due, next, actor.deny(schedule.to().value(), about + ": " + e.getMessage(),
                            allowed.decision().policyVersion()));
                }
                Optional<Appended> appended = office.deliver(actor, schedule.to(), draft, allowed.decision(),
                        about + " (" + allowed.decision().why() + ")", (envelope, audit) -> schedules.fire(schedule.id(),
                                due, next, envelope, audit, schedule.replyWithin().map(now::plus)));
                yield appended.isPresent() ? Firing.FIRED : Firing.MOVED_ON;
            }
        };
    }

    private Firing skip(Schedule schedule, Instant due, Optional<Instant> next, AuditEntry refusal) {
        return schedules.skip(schedule.id(), due, next, refusal.reason(), refusal) ? Firing.SKIPPED : Firing.MOVED_ON;
    }

    /**
     * The content of one firing: the send's, with meta naming the schedule and the occurrence,
     * and a messageId of its own, so that the store takes a second append of the same
     * occurrence for a duplicate.
     */
    private static Payload payload(Schedule schedule, Instant occurrence) {
        Payload sent = schedule.payload();
        Map<String, String> meta = new LinkedHashMap<>(sent.meta());
        meta.put(SCHEDULE_META, schedule.id());
        meta.put(OCCURRENCE_META, occurrence.toString());
        return new Payload(sent.text(), sent.data(), sent.corrId(), sent.threadId(),
                Optional.of("schedule:" + schedule.id() + ":" + occurrence.toEpochMilli()), meta);
    }

    private Occurrences occurrences(Timing.Cron cron, ZoneId zone) {
        return new Occurrences(crons.parse(cron.expression()), zone);
    }

    /** When a one-shot fires; refused when that is not after {@code now}. */
    private static Instant future(Timing.Once once, ZoneId zone, Instant now) {
        Instant at = once.at(zone);
        if (!at.isAfter(now)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "deliverAt " + once.deliverAt() + " ("
                    + at + " UTC) is not in the future");
        }
        if (at.isAfter(Instant.parse("9999-12-31T23:59:59.999Z"))) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "deliverAt must be before the year 10000");
        }
        return at;
    }

    /** The zone named, else the recipient's {@code timezone} label, else UTC; a name that is not an IANA zone is refused. */
    private ZoneId zone(Actor actor, NodeId to, Optional<String> named) {
        if (named.isPresent()) {
            return iana(named.get()).orElseThrow(() -> refuse(actor, to.value(), ErrorCode.INVALID_TIME_ZONE,
                    "timeZone \"" + named.get() + "\" is not an IANA time zone name such as Europe/Berlin or UTC"));
        }
        Optional<String> label = graph.node(to).flatMap(n -> Optional.ofNullable(n.labels().get(ZONE_LABEL)));
        if (label.isEmpty()) {
            return UTC;
        }
        return iana(label.get()).orElseThrow(() -> refuse(actor, to.value(), ErrorCode.INVALID_TIME_ZONE, "the "
                + ZONE_LABEL + " label of " + to + " (\"" + label.get() + "\") is not an IANA time zone name;"
                + " name the zone with timeZone"));
    }

    private static Optional<ZoneId> iana(String name) {
        return ZONES.contains(name) ? Optional.of(ZoneId.of(name)) : Optional.empty();
    }

    private ParleyException refuse(Actor actor, String target, ErrorCode code, String reason) {
        return office.refuse(actor, target, reason, store, new ParleyException(code, reason));
    }

    private static boolean visible(Principal caller, Schedule schedule) {
        return switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller c -> c.id().equals(schedule.from());
        };
    }

    private static ParleyException notFound(String id) {
        return new ParleyException(ErrorCode.SCHEDULE_NOT_FOUND, "schedule " + id + " does not exist");
    }
}
