package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code parley limits ...}: a node's rate limit, a token bucket over its requests. */
@Command(name = "limits", mixinStandardHelpOptions = true,
        description = {"Set, show and reset a node's rate limit (requests a second, and at once).",
                "Without an override a node has the hub's (parley serve --rate, --burst)."},
        subcommands = {LimitsCommand.SetLimits.class, LimitsCommand.ShowLimits.class, LimitsCommand.ResetLimits.class})
final class LimitsCommand extends CommandGroup {

    static String path(String node) {
        return "/v1/nodes/" + HubClient.segment(node) + "/limits";
    }

    static String summary(JsonNode limits) {
        return "node=" + ClientCommand.field(limits, "node") + "  rate=" + ClientCommand.field(limits, "rate")
                + "/s  burst=" + ClientCommand.field(limits, "burst")
                + "  (" + (limits.path("default").asBoolean() ? "the hub's default" : "override") + ")";
    }

    @Command(name = "set", mixinStandardHelpOptions = true,
            description = "Give a node its own rate limit (admin); kept across restarts.")
    static final class SetLimits extends ClientCommand {
        @Parameters(paramLabel = "NODE", description = "Node id.")
        String node;

        @Option(names = "--rate", required = true, paramLabel = "N", description = "Requests a second, above 0 (e.g. 5, 0.5).")
        double rate;

        @Option(names = "--burst", required = true, paramLabel = "N", description = "Requests at once, at least 1.")
        long burst;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            if (!(rate > 0) || burst < 1) {
                throw new ParameterException(spec.commandLine(), "--rate must be above 0 and --burst at least 1");
            }
            ObjectNode body = JsonTrees.object().put("rate", rate).put("burst", burst);
            JsonNode limits = client.put(path(node), body);
            emit(limits, () -> out().println("limits set  " + summary(limits)));
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show a node's rate limit (admin or the node).")
    static final class ShowLimits extends ClientCommand {
        @Parameters(paramLabel = "NODE", description = "Node id.")
        String node;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode limits = client.get(path(node));
            emit(limits, () -> out().println(summary(limits)));
        }
    }

    @Command(name = "reset", aliases = {"rm", "remove"}, mixinStandardHelpOptions = true,
            description = "Put a node back on the hub's default rate limit (admin).")
    static final class ResetLimits extends ClientCommand {
        @Parameters(paramLabel = "NODE", description = "Node id.")
        String node;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode limits = client.delete(path(node));
            emit(limits, () -> out().println("limits reset  " + summary(limits)));
        }
    }
}
