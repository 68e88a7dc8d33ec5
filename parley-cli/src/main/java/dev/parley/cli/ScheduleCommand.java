package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code parley schedule ...}: the sends made with {@code parley send --at} or {@code --cron}. */
@Command(name = "schedule", mixinStandardHelpOptions = true,
        description = "List, show and cancel scheduled sends (made with parley send --at or --cron).",
        subcommands = {ScheduleCommand.ListSchedules.class, ScheduleCommand.ShowSchedule.class,
                ScheduleCommand.RemoveSchedule.class})
final class ScheduleCommand extends CommandGroup {

    /** {@code id=… to=… cron=…|at=… tz=… next=…}: what one line says of a schedule. */
    static String[] summary(JsonNode schedule) {
        return new String[]{"id", field(schedule, "scheduleId"), "to", field(schedule, "to"),
                schedule.has("cron") ? "cron" : "at", when(schedule), "tz", field(schedule, "timeZone"),
                "next", field(schedule, "nextAt")};
    }

    /** The cron expression or the deliverAt time, as the sender wrote it. */
    private static String when(JsonNode schedule) {
        return field(schedule, schedule.has("cron") ? "cron" : "deliverAt");
    }

    /** {@link ClientCommand#field}, for the static helpers of this group. */
    private static String field(JsonNode answer, String name) {
        return ClientCommand.field(answer, name);
    }

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
            description = "List scheduled sends, newest first (a node: its own; admin: all, or --sender's).")
    static final class ListSchedules extends ClientCommand {
        @Option(names = "--sender", paramLabel = "NODE", description = "Only this sender's (admin).")
        String sender;

        @Option(names = "--state", paramLabel = "STATE", description = "Only those active, done, failed or canceled.")
        String state;

        @Option(names = "--limit", paramLabel = "N", description = "At most this many (1-1000; default 100).")
        Integer limit;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get(HubClient.query("/v1/schedules", "sender", sender, "state", state, "limit",
                    limit));
            emit(answer, () -> {
                Table table = new Table("ID", "STATE", "FROM", "TO", "WHEN", "TZ", "NEXT", "FIRED", "SKIPPED");
                answer.path("items").forEach(s -> table.row(field(s, "scheduleId"), field(s, "state"), field(s, "from"),
                        field(s, "to"), when(s), field(s, "timeZone"), field(s, "nextAt"), field(s, "fired"),
                        field(s, "skipped")));
                table.print(out());
            });
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show one scheduled send (its sender or admin).")
    static final class ShowSchedule extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Schedule id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode s = client.get("/v1/schedules/" + HubClient.segment(id));
            emit(s, () -> new Table()
                    .row("id", field(s, "scheduleId"))
                    .row("state", field(s, "state"))
                    .row("route", field(s, "from") + " " + TailCommand.ARROW + " " + field(s, "to"))
                    .row("kind", field(s, "kind"))
                    .row(s.has("cron") ? "cron" : "at", when(s))
                    .row("tz", field(s, "timeZone"))
                    .row("next", field(s, "nextAt"))
                    .row("fired", field(s, "fired"))
                    .row("last fired", field(s, "lastFiredAt"))
                    .row("skipped", field(s, "skipped"))
                    .row("detail", field(s, "detail"))
                    .row("text", field(s, "text"))
                    .row("created", field(s, "createdAt"))
                    .row("ended", field(s, "endedAt"))
                    .print(out()));
        }
    }

    @Command(name = "rm", aliases = "cancel", mixinStandardHelpOptions = true,
            description = {"Cancel a scheduled send (its sender or admin): it fires no more.",
                    "With --json prints {\"scheduleId\":ID,\"canceled\":true} (the hub answers 204 without a body)."})
    static final class RemoveSchedule extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Schedule id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            client.delete("/v1/schedules/" + HubClient.segment(id));
            emit(JsonTrees.object().put("scheduleId", id).put("canceled", true),
                    () -> line("canceled", "schedule", id));
        }
    }
}
