package dev.parley.core;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Scheduled sends, kept beside the inboxes they fire into. */
public interface ScheduleStore {

    /**
     * Stores {@code schedule} with the audit entry of its allowance, unless its sender already
     * scheduled the same messageId (then that schedule comes back, {@code duplicate}). Refused
     * with {@link ErrorCode#SCHEDULE_LIMIT}, nothing written, when the sender already has
     * {@code maxActive} active schedules.
     */
    Schedules.Created create(Schedule schedule, int maxActive, AuditEntry audit);

    Optional<Schedule> schedule(String id);

    /** The schedule {@code sender} created with {@code messageId}, if it did. */
    Optional<Schedule> scheduled(NodeId sender, String messageId);

    /** Schedules newest first, of one sender and in one state when given. */
    List<Schedule> schedules(Optional<NodeId> sender, Optional<Schedule.State> state, int limit);

    /** Active schedules whose next firing is at or before {@code now}, the earliest first. */
    List<Schedule> due(Instant now, int limit);

    /** The earliest next firing of any active schedule. */
    Optional<Instant> nextDue();

    /** Cancels an active schedule with its audit entry; false, nothing written, when it is not active. */
    boolean cancel(String id, Instant at, AuditEntry audit);

    /**
     * Fires one occurrence, in one transaction: appends {@code envelope} as any send is appended
     * (its inbox seq, webhook push, relay; deduplicated by its messageId; a reply deadline at
     * {@code replyBy}) with {@code audit}, and moves the schedule's next firing from
     * {@code due} to {@code next} — or ends it as done when there is none. Empty, nothing
     * written, when the schedule is no longer active or its next firing is no longer
     * {@code due} (another pass fired it, it was canceled): so each occurrence fires at most once.
     */
    Optional<Appended> fire(String id, Instant due, Optional<Instant> next, Envelope envelope, AuditEntry audit,
                            Optional<Instant> replyBy);

    /**
     * Skips one occurrence whose firing was refused, in one transaction with the refusal's
     * {@code audit}: counts it, records {@code why}, and moves the next firing from {@code due}
     * to {@code next} — or ends the schedule as failed when there is none. False, nothing
     * written, on the same terms as {@link #fire}.
     */
    boolean skip(String id, Instant due, Optional<Instant> next, String why, AuditEntry audit);
}
