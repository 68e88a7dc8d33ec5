package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.LinkedHashMap;
import java.util.Map;

/** {@code parley policy ...}: the operator's rules around the ACL, and dry runs of its decisions. */
@Command(name = "policy", mixinStandardHelpOptions = true,
        description = {"Show the policy rules in force and check what they decide.",
                "The rules come from the file the hub runs with (parley serve --policy FILE)."},
        subcommands = {PolicyCommand.ShowPolicy.class, PolicyCommand.CheckPolicy.class})
final class PolicyCommand extends CommandGroup {

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = "Show the policy version, its rules, and the last reload error if any (admin).")
    static final class ShowPolicy extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode policy = client.get("/v1/policy");
            emit(policy, () -> {
                JsonNode error = policy.path("lastError");
                new Table()
                        .row("version", field(policy, "version"))
                        .row("source", field(policy, "source"))
                        .row("loaded", field(policy, "loadedAt"))
                        .row("error", error.isObject() ? field(error, "at") + "  " + field(error, "message") : "-")
                        .print(out());
                Table problems = new Table();
                error.path("problems").forEach(p -> problems.row("  rule " + field(p, "index"), field(p, "rule"),
                        field(p, "error")));
                problems.print(out());
                out().println();
                Table rules = new Table("RULE", "EFFECT", "WHEN");
                policy.path("rules").forEach(r -> rules.row(field(r, "name"), field(r, "effect"), field(r, "when")));
                rules.print(out());
            });
        }
    }

    @Command(name = "check", mixinStandardHelpOptions = true,
            description = {"What a send from --from to --to would be told now; nothing is written.",
                    "Exit 0 when it would be allowed, " + ExitStatus.FORBIDDEN + " when denied.",
                    "The admin may check any pair; a node only its own sends."})
    static final class CheckPolicy extends ClientCommand {
        @Option(names = "--from", required = true, paramLabel = "A", description = "Sender.")
        String from;

        @Option(names = "--to", required = true, paramLabel = "B", description = "Receiver.")
        String to;

        @Option(names = "--kind", paramLabel = "KIND", description = "Message kind (hub default: message).")
        String kind;

        @Option(names = "--text-size", paramLabel = "N", description = "Length of the text, for rules on envelope size.")
        Long textSize;

        @Option(names = "--meta", paramLabel = "K=V", description = "Metadata for rules on envelope.meta; repeatable.")
        Map<String, String> meta = new LinkedHashMap<>();

        @Option(names = "--topic", paramLabel = "NAME", description = "The topic, for rules on envelope.topic.")
        String topic;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            ObjectNode body = JsonTrees.object().put("from", from).put("to", to);
            if (kind != null) {
                body.put("kind", kind);
            }
            if (textSize != null) {
                body.put("textSize", textSize);
            }
            if (!meta.isEmpty()) {
                body.set("meta", JsonTrees.texts(meta));
            }
            if (topic != null) {
                body.put("topic", topic);
            }
            JsonNode verdict = client.post("/v1/policy/check", body);
            emit(verdict, () -> new Table()
                    .row("decision", field(verdict, "decision"))
                    .row("rule", field(verdict, "rule"))
                    .row("reason", field(verdict, "reason"))
                    .row("route", field(verdict, "route"))
                    .row("version", field(verdict, "policyVersion"))
                    .print(out()));
            if (!"allow".equals(verdict.path("decision").asText())) {
                exitWith(ExitStatus.FORBIDDEN);
            }
        }
    }
}
