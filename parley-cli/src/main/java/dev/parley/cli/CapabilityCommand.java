package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;

/** {@code parley capability ...}: capabilities, their catalog and the reviews of their misfires (docs/agents.md). */
@Command(name = "capability", mixinStandardHelpOptions = true,
        description = {"Publish, list, show and unpublish capabilities; read their reviews.",
                "A task addressed to a published capability (parley task create --to cap.NAME) goes to its owner."},
        subcommands = {CapabilityCommand.Publish.class, CapabilityCommand.ListCapabilities.class,
                CapabilityCommand.Show.class, CapabilityCommand.Unpublish.class, CapabilityCommand.Reviews.class})
final class CapabilityCommand extends CommandGroup {

    static String path(String id) {
        return "/v1/capabilities/" + HubClient.segment(id);
    }

    private static String skill(JsonNode capability, String field) {
        return capability.path(field).path("ref").asText() + "@" + capability.path(field).path("version").asText();
    }

    @Command(name = "publish", mixinStandardHelpOptions = true,
            description = {"Publish a capability (its owner, the owner's parent or the admin); publishing again",
                    "replaces its declaration. Every other active agent gets a skill_distribution task."})
    static final class Publish extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "The capability id: cap.NAME (lower case, digits, . _ -).")
        String id;

        @Option(names = "--owner", required = true, paramLabel = "NODE", description = "The node that does the work.")
        String owner;

        @Option(names = "--delegation-skill", required = true, paramLabel = "REF@VERSION", converter = SkillConverter.class,
                description = "The skill other agents use to delegate to it.")
        ObjectNode delegation;

        @Option(names = "--executor-skill", required = true, paramLabel = "REF@VERSION", converter = SkillConverter.class,
                description = "The skill its owner runs.")
        ObjectNode executor;

        @Option(names = "--contract", paramLabel = "FILE",
                description = "A JSON Schema (2020-12) every result must meet; '-' reads it from stdin.")
        String contract;

        @Option(names = "--eta", paramLabel = "DURATION", converter = DurationConverter.class,
                description = "How long a task takes unless its assignee says otherwise (default 1h; at most 7d).")
        Duration eta;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            ObjectNode body = JsonTrees.object().put("capabilityId", id).put("owner", owner);
            body.set("delegationSkill", delegation);
            body.set("executorSkill", executor);
            if (contract != null) {
                body.set("contract", SchemaCommand.read(spec, "--contract", contract));
            }
            if (eta != null) {
                body.put("etaSeconds", eta.toSeconds());
            }
            JsonNode published = client.post("/v1/capabilities", body);
            emit(published, () -> line("published", "id", field(published, "capabilityId"), "owner",
                    field(published, "owner"), "distributed", String.valueOf(published.path("distributionTasks").size())));
        }
    }

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true, description = "The catalog: published capabilities.")
    static final class ListCapabilities extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get("/v1/capabilities");
            emit(answer, () -> {
                Table table = new Table("ID", "OWNER", "DELEGATION", "EXECUTOR", "ETA_S");
                answer.path("items").forEach(c -> table.row(field(c, "capabilityId"), field(c, "owner"),
                        skill(c, "delegationSkill"), skill(c, "executorSkill"), field(c, "etaSeconds")));
                table.print(out());
            });
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "One published capability.")
    static final class Show extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Capability id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode c = client.get(path(id));
            emit(c, () -> {
                line(field(c, "capabilityId"), "owner", field(c, "owner"), "eta", field(c, "etaSeconds") + "s");
                line("  delegation", "skill", skill(c, "delegationSkill"));
                line("  executor", "skill", skill(c, "executorSkill"));
                line("  contract", "schema", c.path("contract").isNull() ? "-" : c.path("contract").toString());
            });
        }
    }

    @Command(name = "unpublish", mixinStandardHelpOptions = true,
            description = {"Withdraw a capability: tasks addressed to it are refused. Its reviews stay.",
                    "With --json prints {\"capabilityId\":ID,\"unpublished\":true}."})
    static final class Unpublish extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Capability id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            client.delete(path(id));
            emit(JsonTrees.object().put("capabilityId", id).put("unpublished", true),
                    () -> line("unpublished", "capability", id));
        }
    }

    @Command(name = "reviews", mixinStandardHelpOptions = true,
            description = {"The skill reviews a capability's misfires raised, newest first",
                    "(its owner, the owner's parent or the admin)."})
    static final class Reviews extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Capability id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get(path(id) + "/reviews");
            emit(answer, () -> {
                Table table = new Table("RAISED", "FAILURE", "DELEGATION", "EXECUTOR", "SAMPLES", "DETAIL");
                answer.path("items").forEach(r -> table.row(field(r, "raisedAt"), field(r, "failure"),
                        skill(r, "delegationSkill"), skill(r, "executorSkill"), field(r, "sampleIds"), field(r, "detail")));
                table.print(out());
            });
        }
    }

    /** {@code REF@VERSION} as {@code {"ref", "version"}}; the version is after the last {@code @}. */
    static final class SkillConverter implements ITypeConverter<ObjectNode> {
        @Override
        public ObjectNode convert(String value) {
            int at = value.lastIndexOf('@');
            if (at <= 0 || at == value.length() - 1) {
                throw new TypeConversionException("a skill is REF@VERSION, such as skills/summarize@1.2, not '" + value + "'");
            }
            return JsonTrees.object().put("ref", value.substring(0, at)).put("version",
                    value.substring(at + 1));
        }
    }
}
