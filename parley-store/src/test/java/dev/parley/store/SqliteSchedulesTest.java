package dev.parley.store;

import dev.parley.core.Appended;
import dev.parley.core.AuditEntry;
import dev.parley.core.AuditQuery;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Payload;
import dev.parley.core.Route;
import dev.parley.core.Schedule;
import dev.parley.core.Timing;
import dev.parley.core.Trace;
import dev.parley.core.UuidV7;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The schedules table on a real SQLite file: a firing moves the schedule on only from the
 * occurrence it names (so a second firing of it writes nothing), appends like a send
 * (announced after the commit), and ends a one-shot; the per-sender limit; messageIds.
 */
class SqliteSchedulesTest {
    private static final Instant NOW = Instant.parse("2026-03-07T17:00:00Z");
    private static final Instant FIRST = Instant.parse("2026-03-08T07:30:00Z");
    private static final Instant SECOND = Instant.parse("2026-03-09T06:30:00Z");
    private static final NodeId LEAD = NodeId.of("lead");
    private static final NodeId WORKER = NodeId.of("worker");

    @TempDir
    Path dir;
    private final UuidV7 ids = new UuidV7(InstantSource.system());
    private final List<Envelope> announced = new CopyOnWriteArrayList<>();
    private SqliteStore store;
    private SqliteSchedules schedules;

    @BeforeEach
    void open() {
        store = SqliteStore.open(dir, announced::add, (count, nanos) -> { });
        schedules = store.schedules();
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void anOccurrenceFiresOnceAndTheScheduleMovesOnInTheSameTransaction() {
        Schedule cron = schedule(new Timing.Cron("30 2 * * *"), Optional.empty());
        assertFalse(schedules.create(cron, 10, audit("schedule.create")).duplicate());
        assertEquals(List.of(cron), schedules.due(FIRST, 10));
        assertEquals(List.of(), schedules.due(FIRST.minusMillis(1), 10));
        assertEquals(Optional.of(FIRST), schedules.nextDue());

        Optional<Appended> fired = schedules.fire(cron.id(), FIRST, Optional.of(SECOND), envelope("schedule:1"),
                audit("schedule.fire"), Optional.empty());
        assertTrue(fired.isPresent());
        assertEquals(1, fired.get().envelope().seq());
        await().atMost(Duration.ofSeconds(10)).until(() -> announced.equals(List.of(fired.get().envelope()))); // as any append is
        assertEquals(Optional.empty(), schedules.fire(cron.id(), FIRST, Optional.of(SECOND), envelope("schedule:2"),
                audit("schedule.fire"), Optional.empty()), "the occurrence already fired: nothing written");
        assertEquals(1, store.inboxAfter(WORKER, 0, 10).size());
        assertFalse(schedules.skip(cron.id(), FIRST, Optional.of(SECOND), "late", audit("schedule.fire")));

        Schedule moved = schedules.schedule(cron.id()).orElseThrow();
        assertEquals(Optional.of(SECOND), moved.nextAt());
        assertEquals(1, moved.fired());
        assertEquals(Schedule.State.ACTIVE, moved.state());
        assertEquals(Optional.of(NOW), moved.lastFiredAt());

        assertTrue(schedules.skip(cron.id(), SECOND, Optional.empty(), "grant withdrawn", audit("schedule.fire")));
        Schedule failed = schedules.schedule(cron.id()).orElseThrow();
        assertEquals(Schedule.State.FAILED, failed.state());
        assertEquals(Optional.of("grant withdrawn"), failed.detail());
        assertEquals(Optional.empty(), failed.nextAt());
        assertEquals(1, failed.skipped());
        assertEquals(Optional.empty(), schedules.nextDue());
        assertEquals(3, store.audit(new AuditQuery(Optional.empty(), Optional.empty(), 10)).size(),
                "create, fire and the skip are audited; the refused writes are not");
    }

    @Test
    void aOneShotEndsDoneWhenItFiresAndACanceledOneNeverFires() {
        Schedule once = schedule(new Timing.Once("2026-03-08T02:30"), Optional.of("m-1"));
        schedules.create(once, 10, audit("schedule.create"));
        assertTrue(schedules.fire(once.id(), FIRST, Optional.empty(), envelope("schedule:once"), audit("schedule.fire"),
                Optional.empty()).isPresent());
        Schedule done = schedules.schedule(once.id()).orElseThrow();
        assertEquals(Schedule.State.DONE, done.state());
        assertEquals(Optional.of(NOW), done.endedAt());
        assertFalse(schedules.cancel(once.id(), NOW, audit("schedule.cancel")), "it already ended");

        Schedule other = schedule(new Timing.Once("2026-03-08T02:30"), Optional.of("m-2"));
        schedules.create(other, 10, audit("schedule.create"));
        assertTrue(schedules.cancel(other.id(), NOW, audit("schedule.cancel")));
        assertEquals(Optional.empty(), schedules.fire(other.id(), FIRST, Optional.empty(), envelope("schedule:other"),
                audit("schedule.fire"), Optional.empty()));
        assertEquals(Schedule.State.CANCELED, schedules.schedule(other.id()).orElseThrow().state());
        assertEquals(1, store.inboxAfter(WORKER, 0, 10).size());
    }

    @Test
    void aSenderHasAtMostMaxActiveSchedulesAndAMessageIdMakesOne() {
        Schedule first = schedule(new Timing.Cron("* * * * *"), Optional.of("same"));
        assertFalse(schedules.create(first, 2, audit("schedule.create")).duplicate());
        var again = schedules.create(schedule(new Timing.Cron("0 * * * *"), Optional.of("same")), 2,
                audit("schedule.create"));
        assertTrue(again.duplicate());
        assertEquals(first, again.schedule());
        assertEquals(Optional.of(first), schedules.scheduled(LEAD, "same"));

        schedules.create(schedule(new Timing.Cron("0 * * * *"), Optional.empty()), 2, audit("schedule.create"));
        ParleyException full = assertThrows(ParleyException.class, () -> schedules.create(
                schedule(new Timing.Cron("0 * * * *"), Optional.empty()), 2, audit("schedule.create")));
        assertEquals(ErrorCode.SCHEDULE_LIMIT, full.code());
        assertEquals(2, schedules.schedules(Optional.of(LEAD), Optional.empty(), 10).size(), "nothing written");

        schedules.cancel(first.id(), NOW, audit("schedule.cancel"));
        schedules.create(schedule(new Timing.Cron("0 * * * *"), Optional.empty()), 2, audit("schedule.create"));
        assertEquals(2, schedules.schedules(Optional.of(LEAD), Optional.of(Schedule.State.ACTIVE), 10).size());
        assertEquals(1, schedules.schedules(Optional.empty(), Optional.of(Schedule.State.CANCELED), 10).size());
        assertEquals(List.of(), schedules.schedules(Optional.of(WORKER), Optional.empty(), 10));
    }

    @Test
    void aScheduleReadsBackAsItWasStored() {
        Schedule stored = new Schedule(ids.next(), LEAD, WORKER, "report", new Payload(Optional.of("hi"),
                Optional.of(new dev.parley.core.JsonText("{\"n\":1}")), Optional.of("c"), Optional.of("t"),
                Optional.of("m"), Map.of("k", "v")), Optional.of(java.time.Duration.ofSeconds(30)),
                new Timing.Once("2026-03-08T09:00-05:00"), ZoneId.of("America/New_York"), NOW, Schedule.State.ACTIVE,
                Optional.of(FIRST), 0, 0, Optional.empty(), Optional.empty(), Optional.empty());
        schedules.create(stored, 10, audit("schedule.create"));
        assertEquals(Optional.of(stored), schedules.schedule(stored.id()));
    }

    private Schedule schedule(Timing timing, Optional<String> messageId) {
        return new Schedule(ids.next(), LEAD, WORKER, "message", new Payload(Optional.of("stand-up"), Optional.empty(),
                Optional.empty(), Optional.empty(), messageId, Map.of()), Optional.empty(), timing,
                ZoneId.of("America/New_York"), NOW, Schedule.State.ACTIVE, Optional.of(FIRST), 0, 0, Optional.empty(),
                Optional.empty(), Optional.empty());
    }

    private Envelope envelope(String messageId) {
        return new Envelope(ids.next(), 0, LEAD, WORKER, "message", Optional.of("stand-up"), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(messageId), Map.of(), NOW,
                new Trace(1, Route.INTRA_GROUP, "test"));
    }

    private static AuditEntry audit(String action) {
        return new AuditEntry(NOW, "lead", action, "worker", AuditEntry.Decision.ALLOW, action, Optional.empty(), "test");
    }
}
