package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static dev.parley.cli.CliRun.addNode;
import static dev.parley.cli.CliRun.as;
import static dev.parley.cli.CliRun.assertFailure;
import static dev.parley.cli.CliRun.parley;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code parley send --at|--cron [--tz]} and {@code parley schedule list|show|rm} against a
 * real hub in-process (see {@link CliRun}) whose clock the test holds and moves.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CliScheduleTest {
    @TempDir
    Path data;

    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-03-07T12:00:00Z"));
    private Hub hub;
    private String lead;
    private String worker;

    @BeforeEach
    void startHub() {
        hub = Hub.start(HubConfig.defaults(data.resolve("hub")).withPort(0), System::nanoTime, now::get);
        lead = addNode(hub, "lead");
        worker = addNode(hub, "worker-1", "--parent", "lead", "--label", "timezone=America/New_York");
    }

    @AfterEach
    void stopHub() {
        hub.close();
    }

    @Test
    void sendLaterListShowAndCancel() {
        // a Saturday; 02:30 on Sunday 2026-03-08 does not exist in New York (the receiver's label): 03:30 EDT
        CliRun once = parley(as(hub, lead, "send", "--to", "worker-1", "--at", "2026-03-08 02:30", "wake", "up"));
        assertEquals(0, once.exit, once::describe);
        assertTrue(once.out().matches("scheduled  id=\\S+  to=worker-1  at=2026-03-08T02:30  tz=America/New_York"
                + "  next=2026-03-08T07:30:00.000Z\\R"), once::describe);

        JsonNode cron = parley(as(hub, lead, "send", "--to", "worker-1", "--cron", "0 9 * * 1-5", "--tz",
                "Europe/Berlin", "--json", "stand-up")).json();
        assertEquals("Europe/Berlin", cron.path("timeZone").asText());
        assertEquals("2026-03-09T08:00:00.000Z", cron.path("nextAt").asText(), "Monday 09:00 CET");
        String cronId = cron.path("scheduleId").asText();

        CliRun list = parley(as(hub, lead, "schedule", "list"));
        assertEquals(0, list.exit, list::describe);
        assertTrue(list.out().startsWith("ID"), list::describe);
        assertTrue(list.out().contains("0 9 * * 1-5") && list.out().contains("2026-03-08T02:30"), list::describe);
        assertEquals(2, parley(as(hub, lead, "schedule", "list", "--json")).json().path("items").size());
        CliRun show = parley(as(hub, lead, "schedule", "show", cronId));
        assertTrue(show.out().contains("Europe/Berlin") && show.out().contains("stand-up"), show::describe);

        now.set(Instant.parse("2026-03-08T07:30:00Z"));
        hub.fireSchedules();
        JsonNode done = parley(as(hub, lead, "schedule", "list", "--state", "done", "--json")).json();
        assertEquals(1, done.path("items").size(), done::toString);
        assertEquals(1, done.at("/items/0/fired").asInt());
        CliRun inbox = parley(as(hub, worker, "tail", "--count", "1"));
        assertTrue(inbox.out().contains("wake up"), inbox::describe);

        CliRun canceled = parley(as(hub, lead, "schedule", "rm", cronId));
        assertEquals("canceled  schedule=" + cronId, canceled.out().strip(), canceled::describe);
        assertEquals(0, parley(as(hub, lead, "schedule", "list", "--state", "active", "--json")).json().path("items")
                .size());
        assertEquals(1, parley(as(hub, hub.adminToken(), "schedule", "list", "--sender", "lead", "--state",
                "canceled", "--json")).json().path("items").size(), "the admin sees every sender's");
    }

    @Test
    void badSchedulesAreRefusedWithTheHubsCodes() {
        assertEquals(ExitStatus.USAGE, parley(as(hub, lead, "send", "--to", "worker-1", "--at", "2026-03-08 09:00",
                "--cron", "0 9 * * *", "both")).exit);
        assertFailure(parley(as(hub, lead, "send", "--to", "worker-1", "--cron", "0 9 * * *", "--tz", "Mars/Base", "x")),
                ExitStatus.REFUSED, "invalid_time_zone");
        assertFailure(parley(as(hub, lead, "send", "--to", "worker-1", "--cron", "0 25 * * *", "x")),
                ExitStatus.REFUSED, "invalid_request");
        assertFailure(parley(as(hub, lead, "send", "--to", "worker-1", "--at", "2026-03-01 09:00", "x")),
                ExitStatus.REFUSED, "invalid_request");
        String id = parley(as(hub, lead, "send", "--to", "worker-1", "--cron", "0 9 * * *", "--json", "x")).json()
                .path("scheduleId").asText();
        assertFailure(parley(as(hub, worker, "schedule", "rm", id)), ExitStatus.NOT_FOUND, "schedule_not_found");
        assertFailure(parley(as(hub, lead, "schedule", "show", "nope")), ExitStatus.NOT_FOUND, "schedule_not_found");
    }
}
