package dev.parley.server.schedule;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import dev.parley.server.it.SseClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Scheduled sends on real hubs over HTTP, on real SQLite files. The hub's clock stands still
 * unless a test moves it, and a test fires what is due with {@code Hub.fireSchedules()}, so
 * every firing across a DST change happens when the test says (the hub's own scheduler may
 * fire the same occurrence first: the assertions are on inboxes and schedules, which are the
 * same either way). One test runs on the real clock.
 */
class ScheduledSendsTest {
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final AtomicReference<Instant> NOW = new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));
    private static final InstantSource CLOCK = NOW::get;

    @TempDir
    static Path shared;
    /** The hub the DST cases share; each case has nodes of its own. */
    private static HubFixture dstHub;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startSharedHub() {
        dstHub = HubFixture.start(shared.resolve("hub"), UnaryOperator.identity(), System::nanoTime, CLOCK);
    }

    @AfterAll
    static void stopSharedHub() {
        dstHub.close();
    }

    /**
     * One DST case: a schedule made at {@code createdAt} for a recipient in {@code zone} (named by
     * the send when {@code named}, else by the recipient's {@code timezone} label); it must fire
     * exactly at {@code firings} (UTC), nothing at {@code quiet}, and then be due at {@code thenNext}.
     */
    record DstCase(String name, String zone, boolean named, String when, boolean cron, String createdAt,
                   List<String> firings, List<String> quiet, String thenNext) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<DstCase> dstCases() {
        String ny = "America/New_York";
        String berlin = "Europe/Berlin";
        return Stream.of(
                // 2026-03-08 in New York: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist
                new DstCase("New York, spring forward: a 02:30 job fires at 03:30 EDT, once", ny, false, "30 2 * * *",
                        true, "2026-03-07T17:00:00Z", List.of("2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"),
                        List.of(), "2026-03-10T06:30:00Z"),
                // 2026-11-01 in New York: 02:00 EDT falls back to 01:00 EST; 01:30 happens twice
                new DstCase("New York, fall back: a 01:30 job fires at the first 01:30 only", ny, false, "30 1 * * *",
                        true, "2026-10-31T16:00:00Z", List.of("2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"),
                        List.of("2026-11-01T06:30:00Z"), "2026-11-03T06:30:00Z"),
                new DstCase("New York, fall back: every 30 minutes does not repeat the hour", ny, false, "*/30 * * * *",
                        true, "2026-11-01T04:40:00Z", List.of("2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z",
                        "2026-11-01T07:00:00Z"), List.of("2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z"),
                        "2026-11-01T07:30:00Z"),
                // 2026-03-29 in Berlin: 02:00 CET jumps to 03:00 CEST
                new DstCase("Berlin, spring forward: a 02:30 job fires at 03:30 CEST, once", berlin, true, "30 2 * * *",
                        true, "2026-03-28T11:00:00Z", List.of("2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"),
                        List.of(), "2026-03-31T00:30:00Z"),
                // 2026-10-25 in Berlin: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice
                new DstCase("Berlin, fall back: a 02:30 job fires at the first 02:30 only", berlin, true, "30 2 * * *",
                        true, "2026-10-24T10:00:00Z", List.of("2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"),
                        List.of("2026-10-25T01:30:00Z"), "2026-10-27T01:30:00Z"),
                new DstCase("New York, --at a time the spring skips: 03:30 EDT", ny, false, "2026-03-08 02:30", false,
                        "2026-03-07T17:00:00Z", List.of("2026-03-08T07:30:00Z"), List.of(), null),
                new DstCase("New York, --at a time the autumn repeats: the first", ny, false, "2026-11-01 01:30", false,
                        "2026-10-31T16:00:00Z", List.of("2026-11-01T05:30:00Z"), List.of("2026-11-01T06:30:00Z"), null),
                new DstCase("Berlin, --at a time the spring skips: 03:30 CEST", berlin, true, "2026-03-29T02:30", false,
                        "2026-03-28T11:00:00Z", List.of("2026-03-29T01:30:00Z"), List.of(), null),
                new DstCase("Berlin, --at a time the autumn repeats: the first", berlin, true, "2026-10-25 02:30", false,
                        "2026-10-24T10:00:00Z", List.of("2026-10-25T00:30:00Z"), List.of("2026-10-25T01:30:00Z"), null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dstCases")
    void firesEachOccurrenceOnceAcrossDstChanges(DstCase c) {
        HubFixture hub = dstHub;
        NOW.set(Instant.parse(c.createdAt()));
        String lead = uid("lead");
        String leadToken = hub.createNode(lead, null);
        String worker = uid("worker");
        // a named zone wins over the recipient's label
        String workerToken = node(hub, worker, lead, c.named() ? "Asia/Tokyo" : c.zone());
        JsonNode body = obj("to", worker, "text", c.name(), c.cron() ? "cron" : "deliverAt", c.when());
        if (c.named()) {
            ((com.fasterxml.jackson.databind.node.ObjectNode) body).put("timeZone", c.zone());
        }
        HubFixture.Resp created = hub.post(leadToken, "/v1/messages", body);
        assertEquals(202, created.status(), created::toString);
        assertEquals(c.zone(), created.text("timeZone"));
        String id = created.text("scheduleId");

        List<Instant> quiet = new ArrayList<>(c.quiet().stream().map(Instant::parse).toList());
        int delivered = 0;
        for (String firing : c.firings()) {
            Instant at = Instant.parse(firing);
            assertEquals(HubFixture.rfc3339(at), schedule(hub, leadToken, id).get("nextAt").asText(), c::name);
            fireAt(hub, at.minusMillis(1));
            assertEquals(delivered, hub.inbox(workerToken).size(), () -> "fired before " + firing);
            fireAt(hub, at);
            List<JsonNode> inbox = hub.inbox(workerToken);
            assertEquals(++delivered, inbox.size(), () -> "did not fire at " + firing + ": " + inbox);
            JsonNode envelope = inbox.getLast();
            assertEquals(id, envelope.at("/meta/parley.schedule").asText());
            assertEquals(at.toString(), envelope.at("/meta/parley.occurrence").asText());
            assertEquals(HubFixture.rfc3339(at), envelope.get("createdAt").asText());
            assertEquals(lead, envelope.get("from").asText());
            while (!quiet.isEmpty() && quiet.getFirst().isBefore(next(c, firing))) {
                Instant silent = quiet.removeFirst();
                fireAt(hub, silent);
                assertEquals(delivered, hub.inbox(workerToken).size(), () -> "fired again at " + silent);
            }
        }
        JsonNode after = schedule(hub, leadToken, id);
        assertEquals(c.firings().size(), after.get("fired").asInt());
        if (c.thenNext() == null) {
            assertEquals("done", after.get("state").asText(), after::toString);
            assertTrue(after.get("nextAt").isNull());
        } else {
            assertEquals(HubFixture.rfc3339(Instant.parse(c.thenNext())), after.get("nextAt").asText());
            assertEquals(204, hub.delete(leadToken, "/v1/schedules/" + id).status());
        }
    }

    /** The firing after {@code firing} in the case, or the end of time. */
    private static Instant next(DstCase c, String firing) {
        int i = c.firings().indexOf(firing);
        return i + 1 < c.firings().size() ? Instant.parse(c.firings().get(i + 1)) : Instant.MAX;
    }

    @Test
    void aScheduleSurvivesARestartAndFiresTheLatestMissedOccurrenceOnce() {
        Path data = tmp.resolve("hub");
        NOW.set(Instant.parse("2026-05-01T08:00:00Z"));
        String workerToken;
        String leadToken;
        String daily;
        String once;
        try (HubFixture hub = start(data)) {
            leadToken = hub.createNode("lead", null);
            workerToken = hub.createNode("worker", "lead");
            daily = created(hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "daily",
                    "cron", "0 9 * * *", "timeZone", "UTC")));
            once = created(hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "once",
                    "deliverAt", "2026-05-01T08:30:00Z", "replyWithinMs", 60_000)));
        }
        // down through four 09:00s and the one-shot
        NOW.set(Instant.parse("2026-05-04T09:30:00Z"));
        try (HubFixture hub = start(data)) {
            hub.hub().fireSchedules(); // the hub's first pass, at its start, may have done it already
            List<JsonNode> inbox = hub.inbox(workerToken);
            assertEquals(List.of("once", "daily"), inbox.stream().map(e -> e.get("text").asText()).toList(),
                    inbox::toString);
            assertEquals("2026-05-01T08:30:00Z", inbox.get(0).at("/meta/parley.occurrence").asText(), "late, once");
            assertEquals("2026-05-04T09:00:00Z", inbox.get(1).at("/meta/parley.occurrence").asText(),
                    "the latest missed occurrence stands for the four");
            JsonNode schedule = schedule(hub, leadToken, daily);
            assertEquals("2026-05-05T09:00:00.000Z", schedule.get("nextAt").asText());
            assertEquals(1, schedule.get("fired").asInt());
            assertEquals("done", schedule(hub, leadToken, once).get("state").asText());
            // replyWithinMs holds for each firing, from when it fired
            assertEquals(60_000, schedule(hub, leadToken, once).get("replyWithinMs").asInt());
            fireAt(hub, Instant.parse("2026-05-04T09:31:01Z"));
            await().atMost(PATIENCE).until(() -> hub.inbox(leadToken).stream()
                    .anyMatch(e -> "incident".equals(e.get("kind").asText())
                            && inbox.get(0).get("id").asText().equals(e.get("corrId").asText())));
            hub.hub().fireSchedules();
            assertEquals(2, hub.inbox(workerToken).size(), "nothing fires twice");
        }
        try (HubFixture hub = start(data)) {
            hub.hub().fireSchedules();
            assertEquals(2, hub.inbox(workerToken).size(), "no more after another restart at the same time");
            fireAt(hub, Instant.parse("2026-05-05T09:00:00Z"));
            assertEquals(3, hub.inbox(workerToken).size());
        }
    }

    @Test
    void passesRunAtOnceAtTheSameInstantDeliverOneEnvelope() throws Exception {
        NOW.set(Instant.parse("2026-06-01T12:00:00Z"));
        try (HubFixture hub = start(tmp.resolve("hub"))) {
            String leadToken = hub.createNode("lead", null);
            String workerToken = hub.createNode("worker", "lead");
            created(hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "hourly", "cron", "0 * * * *")));
            created(hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "once",
                    "deliverAt", "2026-06-01 13:00")));
            NOW.set(Instant.parse("2026-06-01T13:00:00Z"));
            var pool = Executors.newFixedThreadPool(4);
            try {
                List<Callable<Object>> passes = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    passes.add(() -> hub.hub().fireSchedules());
                }
                for (var pass : pool.invokeAll(passes)) {
                    pass.get();
                }
            } finally {
                pool.shutdown();
            }
            hub.hub().fireSchedules();
            assertEquals(List.of("hourly", "once"), hub.inbox(workerToken).stream().map(e -> e.get("text").asText())
                    .sorted().toList());
        }
    }

    @Test
    void aFiringThePolicyNoLongerAllowsIsSkippedAuditedAndAOneShotFails() {
        NOW.set(Instant.parse("2026-06-01T10:10:00Z"));
        try (HubFixture hub = start(tmp.resolve("hub"))) {
            String leadToken = hub.createNode("lead", null);
            String outsiderToken = hub.createNode("outsider", null); // another group: only a grant lets lead reach it
            assertError(hub.post(leadToken, "/v1/messages", obj("to", "outsider", "text", "x", "cron", "0 * * * *")),
                    403, "acl_denied");
            String grant = hub.post(hub.admin(), "/v1/grants", obj("from", "lead", "to", "outsider")).text("id");
            String hourly = created(hub.post(leadToken, "/v1/messages", obj("to", "outsider", "text", "hourly",
                    "cron", "0 * * * *")));
            String once = created(hub.post(leadToken, "/v1/messages", obj("to", "outsider", "text", "once",
                    "deliverAt", "2026-06-01T12:30:00Z")));
            fireAt(hub, Instant.parse("2026-06-01T11:00:00Z"));
            assertEquals(1, hub.inbox(outsiderToken).size());

            assertEquals(204, hub.delete(hub.admin(), "/v1/grants/" + grant).status());
            fireAt(hub, Instant.parse("2026-06-01T12:00:00Z"));
            fireAt(hub, Instant.parse("2026-06-01T12:30:00Z"));
            assertEquals(1, hub.inbox(outsiderToken).size(), "refused when they came");
            JsonNode skipped = schedule(hub, leadToken, hourly);
            assertEquals(List.of("active", "1", "1", "2026-06-01T13:00:00.000Z"), List.of(skipped.get("state").asText(),
                    skipped.get("fired").asText(), skipped.get("skipped").asText(), skipped.get("nextAt").asText()));
            assertTrue(skipped.get("detail").asText().contains("different groups"), skipped::toString);
            JsonNode failed = schedule(hub, leadToken, once);
            assertEquals("failed", failed.get("state").asText(), failed::toString);
            assertTrue(failed.get("nextAt").isNull());
            String denials = hub.get(hub.admin(), "/v1/audit?action=schedule.fire&decision=deny").body();
            assertTrue(denials.contains(hourly) && denials.contains(once), denials);

            hub.post(hub.admin(), "/v1/grants", obj("from", "lead", "to", "outsider"));
            fireAt(hub, Instant.parse("2026-06-01T13:00:00Z"));
            assertEquals(2, hub.inbox(outsiderToken).size(), "allowed again, it fires again");
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=schedule.fire&decision=allow").body().contains(hourly));

            // a recipient or a sender that is gone ends the schedule: their ids are never used again
            String tempToken = hub.createNode("temp", "lead");
            String orphan = created(hub.post(tempToken, "/v1/messages", obj("to", "lead", "text", "from beyond",
                    "cron", "0 * * * *")));
            assertEquals(204, hub.delete(hub.admin(), "/v1/nodes/outsider").status());
            assertEquals(204, hub.delete(hub.admin(), "/v1/nodes/temp").status());
            fireAt(hub, Instant.parse("2026-06-01T14:00:00Z"));
            JsonNode ended = schedule(hub, leadToken, hourly);
            assertEquals("failed", ended.get("state").asText(), ended::toString);
            assertTrue(ended.get("detail").asText().contains("does not exist"), ended::toString);
            assertTrue(ended.get("nextAt").isNull());
            JsonNode orphaned = schedule(hub, hub.admin(), orphan);
            assertEquals("failed", orphaned.get("state").asText(), orphaned::toString);
            assertTrue(orphaned.get("detail").asText().contains("sender no longer exists"), orphaned::toString);
            assertEquals(List.of(), hub.inbox(leadToken));
        }
    }

    @Test
    void badInputIsRefusedWithItsCodeAuditedAndNothingIsStored() {
        NOW.set(Instant.parse("2026-06-01T10:00:00Z"));
        try (HubFixture hub = start(tmp.resolve("hub"))) {
            String leadToken = hub.createNode("lead", null);
            hub.createNode("worker", "lead");
            node(hub, "drifter", "lead", "Mars/Olympus_Mons");
            hub.createNode("stranger", null);
            record Bad(Object body, int status, String code, String says) {
            }
            List<Bad> bad = List.of(
                    new Bad(obj("to", "worker", "text", "x", "cron", "0 9 * * *", "timeZone", "Mars/Olympus_Mons"),
                            400, "invalid_time_zone", "Mars/Olympus_Mons"),
                    new Bad(obj("to", "worker", "text", "x", "cron", "0 9 * * *", "timeZone", "+05:00"), 400,
                            "invalid_time_zone", "IANA"),
                    new Bad(obj("to", "worker", "text", "x", "cron", "0 9 * * *", "timeZone", "america/new_york"), 400,
                            "invalid_time_zone", "america/new_york"),
                    new Bad(obj("to", "drifter", "text", "x", "cron", "0 9 * * *"), 400, "invalid_time_zone",
                            "timezone label of drifter"),
                    new Bad(obj("to", "worker", "text", "x", "cron", "61 9 * * *"), 400, "invalid_request",
                            "field 'cron'"),
                    new Bad(obj("to", "worker", "text", "x", "cron", "0 9 * *"), 400, "invalid_request", "cron"),
                    new Bad(obj("to", "worker", "text", "x", "cron", "0 0 30 2 *"), 400, "invalid_request",
                            "names no time"),
                    new Bad(obj("to", "worker", "text", "x", "deliverAt", "2026-06-01T09:59:59Z"), 400,
                            "invalid_request", "not in the future"),
                    new Bad(obj("to", "worker", "text", "x", "deliverAt", "2026-06-01 10:00"), 400, "invalid_request",
                            "not in the future"),
                    new Bad(obj("to", "worker", "text", "x", "deliverAt", "tomorrow at nine"), 400, "invalid_request",
                            "deliverAt"),
                    new Bad(obj("to", "worker", "text", "x", "deliverAt", "2026-07-01 09:00", "cron", "0 9 * * *"),
                            400, "invalid_request", "not both"),
                    new Bad(obj("to", "worker", "text", "x", "timeZone", "Europe/Berlin"), 400, "invalid_request",
                            "neither"),
                    new Bad(obj("to", "worker", "text", "x", "cron", 9), 400, "invalid_request", "cron"),
                    new Bad(obj("to", "worker", "cron", "0 9 * * *"), 400, "invalid_request", "text"),
                    new Bad(obj("to", "nobody", "text", "x", "cron", "0 9 * * *"), 404, "node_not_found", "nobody"),
                    new Bad(obj("to", "stranger", "text", "x", "cron", "0 9 * * *"), 403, "acl_denied", "groups"),
                    new Bad(obj("to", "worker", "from", "worker", "text", "x", "cron", "0 9 * * *"), 403,
                            "identity_mismatch", "from"));
            for (Bad b : bad) {
                HubFixture.Resp r = hub.post(leadToken, "/v1/messages", b.body());
                assertError(r, b.status(), b.code());
                assertTrue(r.text("message").contains(b.says()), () -> b + " said " + r);
                assertFalse(r.text("message").contains("Exception"), r::toString);
            }
            assertError(hub.post(leadToken, "/v1/messages?wait=1000", obj("to", "worker", "text", "x",
                    "requiresReply", true, "cron", "0 9 * * *")), 400, "invalid_request");
            assertError(hub.post(hub.admin(), "/v1/messages", obj("to", "worker", "text", "x", "cron", "0 9 * * *")),
                    403, "forbidden");
            assertEquals(List.of(), hub.get(leadToken, "/v1/schedules").items(), "nothing stored");
            assertEquals(List.of(), hub.get(hub.admin(), "/v1/schedules").items());

            String denials = hub.get(hub.admin(), "/v1/audit?action=schedule.create&decision=deny&limit=100").body();
            for (String said : List.of("Mars/Olympus_Mons", "+05:00", "timezone label of drifter", "61 9 * * *",
                    "not in the future", "not both", "nobody", "different groups")) {
                assertTrue(denials.contains(said), () -> said + " is not in the audit log: " + denials);
            }
            // and nothing is lost: a good one goes through after all that
            assertEquals(202, hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "x", "cron",
                    "0 9 * * 1-5", "timeZone", "Europe/Berlin")).status());
        }
    }

    @Test
    void aScheduleIsItsSendersToSeeAndCancelAndTheAdminsToo() {
        NOW.set(Instant.parse("2026-06-01T10:00:00Z"));
        try (HubFixture hub = start(tmp.resolve("hub"))) {
            String leadToken = hub.createNode("lead", null);
            String workerToken = hub.createNode("worker", "lead");
            String otherToken = hub.createNode("other", null);
            HubFixture.Resp first = hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "standup",
                    "cron", "0 9 * * 1-5", "messageId", "standup", "meta", Map.of("team", "core")));
            String id = created(first);
            assertEquals("0 9 * * 1-5", first.text("cron"));
            assertEquals("UTC", first.text("timeZone"), "no zone named, no label: UTC");
            assertEquals("2026-06-02T09:00:00.000Z", first.text("nextAt"));
            assertEquals("core", first.json().at("/meta/team").asText());
            HubFixture.Resp again = hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "standup",
                    "cron", "0 9 * * 1-5", "messageId", "standup"));
            assertEquals(200, again.status(), again::toString);
            assertTrue(again.get("duplicate").asBoolean());
            assertEquals(id, again.text("scheduleId"));

            assertEquals(1, hub.get(leadToken, "/v1/schedules").items().size());
            assertEquals(List.of(), hub.get(otherToken, "/v1/schedules").items());
            for (String notTheirs : List.of(otherToken, workerToken)) {
                assertError(hub.get(notTheirs, "/v1/schedules/" + id), 404, "schedule_not_found");
                assertError(hub.delete(notTheirs, "/v1/schedules/" + id), 404, "schedule_not_found");
            }
            assertError(hub.get(leadToken, "/v1/schedules/not-an-id"), 404, "schedule_not_found");
            assertError(hub.get(leadToken, "/v1/schedules?sender=other"), 403, "forbidden");
            assertError(hub.get(leadToken, "/v1/schedules?state=sleeping"), 400, "invalid_request");
            assertError(hub.get(leadToken, "/v1/schedules?limit=0"), 400, "invalid_request");
            assertEquals(1, hub.get(hub.admin(), "/v1/schedules?sender=lead").items().size());
            assertEquals(List.of(), hub.get(hub.admin(), "/v1/schedules?sender=other").items());
            assertEquals(200, hub.get(hub.admin(), "/v1/schedules/" + id).status());

            assertEquals(204, hub.delete(leadToken, "/v1/schedules/" + id).status());
            JsonNode canceled = schedule(hub, leadToken, id);
            assertEquals("canceled", canceled.get("state").asText());
            assertTrue(canceled.get("nextAt").isNull());
            assertEquals("2026-06-01T10:00:00.000Z", canceled.get("endedAt").asText());
            assertEquals(204, hub.delete(leadToken, "/v1/schedules/" + id).status(), "canceling again changes nothing");
            assertEquals(1, hub.get(leadToken, "/v1/schedules?state=canceled").items().size());
            assertEquals(List.of(), hub.get(leadToken, "/v1/schedules?state=active").items());
            fireAt(hub, Instant.parse("2026-06-02T09:00:00Z"));
            assertEquals(List.of(), hub.inbox(workerToken), "a canceled schedule never fires");
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=schedule.cancel").body().contains(id));

            String once = created(hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "once",
                    "deliverAt", "2026-06-02T10:00:00Z")));
            String byAdmin = created(hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "x",
                    "cron", "0 * * * *")));
            assertEquals(204, hub.delete(hub.admin(), "/v1/schedules/" + byAdmin).status(), "the admin cancels any");
            fireAt(hub, Instant.parse("2026-06-02T10:00:00Z"));
            assertError(hub.delete(leadToken, "/v1/schedules/" + once), 409, "invalid_transition");
            assertEquals(List.of("once"), hub.inbox(workerToken).stream().map(e -> e.get("text").asText()).toList());
        }
    }

    /** The real clock: a one-shot two seconds from now reaches the recipient's open stream by itself. */
    @Test
    void aOneShotFiresOnTheRealClockIntoTheRecipientsStream() {
        try (HubFixture hub = HubFixture.start(tmp.resolve("real"))) {
            String leadToken = hub.createNode("lead", null);
            String workerToken = hub.createNode("worker", "lead");
            try (SseClient stream = SseClient.open(hub, "/v1/inbox/stream", workerToken, null)) {
                stream.expectReady(PATIENCE);
                Instant at = Instant.now().plusSeconds(2).truncatedTo(ChronoUnit.MILLIS);
                String id = created(hub.post(leadToken, "/v1/messages", obj("to", "worker", "text", "on time",
                        "deliverAt", HubFixture.rfc3339(at))));
                await().atMost(PATIENCE).until(() -> "done".equals(schedule(hub, leadToken, id).get("state").asText()));
                JsonNode envelope = stream.nextEvent(PATIENCE).json();
                assertEquals("on time", envelope.get("text").asText());
                assertFalse(Instant.parse(envelope.get("createdAt").asText()).isBefore(at), envelope::toString);
                assertEquals(at.toString(), envelope.at("/meta/parley.occurrence").asText());
            }
            assertEquals(1, hub.inbox(workerToken).size());
        }
    }

    private HubFixture start(Path data) {
        return HubFixture.start(data, UnaryOperator.identity(), System::nanoTime, CLOCK);
    }

    /** Moves the hub's clock to {@code at} and fires what is due. */
    private static void fireAt(HubFixture hub, Instant at) {
        NOW.set(at);
        hub.hub().fireSchedules();
    }

    /** A node with a {@code timezone} label; its token. */
    private static String node(HubFixture hub, String id, String parent, String zone) {
        HubFixture.Resp r = hub.post(hub.admin(), "/v1/nodes", obj("id", id, "kind", "human", "parent", parent,
                "labels", Map.of("timezone", zone)));
        assertEquals(201, r.status(), r::toString);
        return r.text("token");
    }

    private static String created(HubFixture.Resp r) {
        assertEquals(202, r.status(), r::toString);
        String id = r.text("scheduleId");
        assertNotNull(id, r::toString);
        return id;
    }

    private static JsonNode schedule(HubFixture hub, String token, String id) {
        HubFixture.Resp r = hub.get(token, "/v1/schedules/" + id);
        assertEquals(200, r.status(), r::toString);
        return r.json();
    }
}
