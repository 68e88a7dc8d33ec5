package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.NodeKind;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code parley task ...}: delegated work. The creator creates, cancels and watches; the
 * assignee moves the task through {@code submitted → accepted → working → completed | failed}.
 */
@Command(name = "task", mixinStandardHelpOptions = true,
        description = {"Delegate tasks and move them through their states.",
                "States: submitted -> accepted -> working -> completed | failed | canceled.",
                "Each change reaches the creator's inbox (kinds task_accept, task_update, task_complete, task_failed)."},
        subcommands = {TaskCommand.CreateTask.class, TaskCommand.AcceptTask.class, TaskCommand.UpdateTask.class,
                TaskCommand.CompleteTask.class, TaskCommand.FailTask.class, TaskCommand.CancelTask.class,
                TaskCommand.ShowTask.class, TaskCommand.ListTasks.class})
final class TaskCommand extends CommandGroup {

    static String path(String id) {
        return "/v1/tasks/" + HubClient.segment(id);
    }

    /** A JSON value of a task (input, progress, result) on one line, {@code -} when absent. */
    private static String json(JsonNode task, String name) {
        JsonNode value = task.path(name);
        return value.isMissingNode() || value.isNull() ? "-" : value.toString();
    }

    /** The one-line summary every command that changes a task prints. */
    static String summary(String head, JsonNode task) {
        return head + "  id=" + ClientCommand.field(task, "id") + "  state=" + ClientCommand.field(task, "state")
                + "  assignee=" + ClientCommand.field(task, "assignee");
    }

    /** Every field of a task, one per row. */
    static void print(PrintWriter out, JsonNode task) {
        Table table = new Table()
                .row("id", ClientCommand.field(task, "id"))
                .row("title", ClientCommand.field(task, "title"))
                .row("state", ClientCommand.field(task, "state"))
                .row("route", ClientCommand.field(task, "creator") + " " + TailCommand.ARROW + " "
                        + ClientCommand.field(task, "assignee"))
                .row("ephemeral", ClientCommand.field(task, "ephemeral"))
                .row("eta", task.path("etaSeconds").isNumber() ? task.path("etaSeconds").asLong() + " s" : "-")
                .row("input", json(task, "input"))
                .row("progress", json(task, "progress"))
                .row("result", json(task, "result"));
        JsonNode artifacts = task.path("artifacts");
        if (artifacts.isEmpty()) {
            table.row("artifacts", "-");
        }
        for (int i = 0; i < artifacts.size(); i++) {
            JsonNode artifact = artifacts.get(i);
            table.row(i == 0 ? "artifacts" : "", ClientCommand.field(artifact, "uri") + "  "
                    + ClientCommand.field(artifact, "mediaType"));
        }
        table.row("reason", ClientCommand.field(task, "reason"))
                .row("created", ClientCommand.field(task, "createdAt"))
                .row("updated", ClientCommand.field(task, "updatedAt"))
                .print(out);
    }

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = {"Delegate a task to a node (--to), or to a new child of yours spawned for it (--spawn).",
                    "A spawned child's token is printed once: it is the child's only credential.",
                    "With --template the hub runs the child as a managed agent and recycles it when the task ends."})
    static final class CreateTask extends ClientCommand {
        @ArgGroup(exclusive = true, multiplicity = "1", heading = "Assignee (one of):%n")
        Assignee assignee;

        @Option(names = "--title", required = true, paramLabel = "T", description = "What the task is.")
        String title;

        @Option(names = "--input", paramLabel = "JSON", converter = JsonArgument.Converter.class,
                description = "The task's input, any JSON value.")
        JsonArgument input;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            ObjectNode body = JsonTrees.object();
            if (assignee.to != null) {
                body.put("to", assignee.to);
            } else {
                ObjectNode spawn = body.putObject("spawn").put("id", assignee.spawn.id);
                if (assignee.spawn.kind != null) {
                    spawn.put("kind", assignee.spawn.kind.wire());
                }
                if (!assignee.spawn.labels.isEmpty()) {
                    spawn.set("labels", JsonTrees.texts(assignee.spawn.labels));
                }
                if (assignee.spawn.template == null && !assignee.spawn.capabilities.isEmpty()) {
                    throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                            "--capability goes with --template (a child the hub runs)");
                }
                if (assignee.spawn.template != null) { // a child the hub runs is always recycled
                    spawn.put("template", assignee.spawn.template);
                    spawn.set("capabilities", JsonTrees.texts(assignee.spawn.capabilities));
                } else {
                    body.put("ephemeral", assignee.spawn.ephemeral);
                }
            }
            body.put("title", title);
            if (input != null) {
                body.set("input", input.tree());
            }
            JsonNode task = client.post("/v1/tasks", body);
            emit(task, () -> {
                out().println(summary("created", task));
                if (task.hasNonNull("assigneeToken")) {
                    NodeCommand.printToken(out(), field(task, "assigneeToken"));
                }
            });
        }
    }

    static final class Assignee {
        @Option(names = "--to", required = true, paramLabel = "NODE",
                description = "An existing node, or a published capability (cap.NAME): its owner.")
        String to;

        @ArgGroup(exclusive = false, multiplicity = "1")
        Spawn spawn;
    }

    static final class Spawn {
        @Option(names = "--spawn", required = true, paramLabel = "ID",
                description = "Create this child of yours as the assignee.")
        String id;

        @Option(names = "--spawn-kind", paramLabel = "KIND", converter = NodeCommand.KindConverter.class,
                completionCandidates = NodeCommand.KindCandidates.class,
                description = "The child's kind: external, managed or human (hub default: external).")
        NodeKind kind;

        @Option(names = "--spawn-label", paramLabel = "K=V", description = "A label of the child; repeatable.")
        Map<String, String> labels = new LinkedHashMap<>();

        @Option(names = "--ephemeral", description = "Remove the child when the task ends.")
        boolean ephemeral;

        @Option(names = "--template", paramLabel = "AGENT",
                description = {"Make the child a managed agent the hub runs, with the spec of AGENT (an agent of yours);",
                        "it is recycled when the task ends."})
        String template;

        @Option(names = "--capability", paramLabel = "NODE",
                description = "With --template: a node the child may reach (one you may reach); repeatable.")
        List<String> capabilities = new ArrayList<>();
    }

    /** A change of a task's state: the assignee's events and the creator's cancel. */
    abstract static class TaskEventCommand extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Task id.")
        String id;

        /** What the readable output starts with, e.g. {@code accepted}. */
        abstract String done();

        /** The event's body. */
        abstract ObjectNode event();

        /** The route taking the event; the assignee's events share one. */
        String route() {
            return path(id) + "/events";
        }

        @Override
        protected final void execute(HubClient client) throws InterruptedException {
            JsonNode task = client.post(route(), event());
            emit(task, () -> out().println(summary(done(), task)));
        }

        static ObjectNode ofType(String type) {
            return JsonTrees.object().put("type", type);
        }
    }

    @Command(name = "accept", mixinStandardHelpOptions = true, description = "Accept a task assigned to you.")
    static final class AcceptTask extends TaskEventCommand {
        @Option(names = "--eta", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "When you expect to finish, from now (e.g. 10m).")
        Duration eta;

        @Override
        String done() {
            return "accepted";
        }

        @Override
        ObjectNode event() {
            ObjectNode event = ofType("accept");
            if (eta != null) {
                event.put("etaSeconds", eta.toSeconds());
            }
            return event;
        }
    }

    @Command(name = "update", mixinStandardHelpOptions = true,
            description = "Report progress on a task you accepted (it becomes working).")
    static final class UpdateTask extends TaskEventCommand {
        @Option(names = "--progress", paramLabel = "JSON", converter = JsonArgument.Converter.class,
                description = "Progress, any JSON value, e.g. {\"percent\":40}.")
        JsonArgument progress;

        @Override
        String done() {
            return "updated";
        }

        @Override
        ObjectNode event() {
            ObjectNode event = ofType("update");
            if (progress != null) {
                event.set("progress", progress.tree());
            }
            return event;
        }
    }

    @Command(name = "complete", mixinStandardHelpOptions = true, description = "Complete a task you accepted.")
    static final class CompleteTask extends TaskEventCommand {
        @Option(names = "--result", paramLabel = "JSON", converter = JsonArgument.Converter.class,
                description = "The result, any JSON value.")
        JsonArgument result;

        @Option(names = "--artifact", paramLabel = "URI[=MEDIA_TYPE]", converter = ArtifactConverter.class,
                description = {"Something the task produced; repeatable.",
                        "The media type (hub default: application/octet-stream) follows the last '=' "
                                + "that is followed by one, e.g. file:///out/report.pdf=application/pdf."})
        List<ObjectNode> artifacts = new ArrayList<>();

        @Override
        String done() {
            return "completed";
        }

        @Override
        ObjectNode event() {
            ObjectNode event = ofType("complete");
            if (result != null) {
                event.set("result", result.tree());
            }
            if (!artifacts.isEmpty()) {
                event.putArray("artifacts").addAll(artifacts);
            }
            return event;
        }
    }

    @Command(name = "fail", mixinStandardHelpOptions = true, description = "Give up a task assigned to you.")
    static final class FailTask extends TaskEventCommand {
        @Option(names = "--reason", required = true, paramLabel = "R", description = "Why, for the creator.")
        String reason;

        @Override
        String done() {
            return "failed";
        }

        @Override
        ObjectNode event() {
            return ofType("fail").put("reason", reason);
        }
    }

    @Command(name = "cancel", mixinStandardHelpOptions = true, description = "Cancel a task you created.")
    static final class CancelTask extends TaskEventCommand {
        @Option(names = "--reason", paramLabel = "R", description = "Why, for the assignee.")
        String reason;

        @Override
        String done() {
            return "canceled";
        }

        @Override
        String route() {
            return path(id) + "/cancel";
        }

        @Override
        ObjectNode event() {
            ObjectNode event = JsonTrees.object();
            if (reason != null) {
                event.put("reason", reason);
            }
            return event;
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "Show a task (its creator, its assignee or the admin).")
    static final class ShowTask extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Task id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode task = client.get(path(id));
            emit(task, () -> print(out(), task));
        }
    }

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
            description = "List the tasks you created or were assigned (admin: all).")
    static final class ListTasks extends ClientCommand {
        @Option(names = "--assignee", paramLabel = "A", description = "Only those assigned to this node.")
        String assignee;

        @Option(names = "--state", paramLabel = "S",
                description = "Only those in this state: submitted, accepted, working, completed, failed, canceled.")
        String state;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get(HubClient.query("/v1/tasks", "assignee", assignee, "state", state));
            emit(answer, () -> {
                Table table = new Table("ID", "STATE", "CREATOR", "ASSIGNEE", "TITLE");
                answer.path("items").forEach(t -> table.row(field(t, "id"), field(t, "state"), field(t, "creator"),
                        field(t, "assignee"), field(t, "title")));
                table.print(out());
            });
        }
    }

    /**
     * {@code URI[=MEDIA_TYPE]}. URIs may hold '=' themselves (query strings), so the media
     * type is only what follows the last '=' that is followed by a {@code type/subtype}.
     */
    static final class ArtifactConverter implements ITypeConverter<ObjectNode> {
        private static final Pattern MEDIA_TYPE = Pattern.compile("[\\w!#$&^.+-]+/[\\w!#$&^.+-]+(\\s*;.*)?");

        @Override
        public ObjectNode convert(String value) {
            ObjectNode artifact = JsonTrees.object();
            for (int at = value.lastIndexOf('='); at > 0; at = value.lastIndexOf('=', at - 1)) {
                if (MEDIA_TYPE.matcher(value.substring(at + 1)).matches()) {
                    return artifact.put("uri", value.substring(0, at)).put("mediaType", value.substring(at + 1));
                }
            }
            if (value.isBlank()) {
                throw new TypeConversionException("an artifact needs a URI");
            }
            return artifact.put("uri", value);
        }
    }
}
