package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.NodeKind;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code parley node ...}: the message graph's nodes. */
@Command(name = "node", mixinStandardHelpOptions = true, description = "Create, list, show and remove nodes.",
        subcommands = {NodeCommand.AddNode.class, NodeCommand.ListNodes.class, NodeCommand.ShowNode.class,
                NodeCommand.RemoveNode.class, NodeCommand.Routing.class})
final class NodeCommand extends CommandGroup {

    /** Prints a freshly issued token: the hub keeps only its hash, so this is the only chance to copy it. */
    static void printToken(PrintWriter out, String token) {
        out.println("token    " + token);
        out.println("         (shown once; the hub stores only its hash)");
    }

    @Command(name = "add", mixinStandardHelpOptions = true,
            description = {"Create a node and print its token.",
                    "As admin: a root, or a child of any node (--parent). As a node: a child of itself."})
    static final class AddNode extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Node id.")
        String id;

        @Option(names = "--kind", paramLabel = "KIND", converter = KindConverter.class,
                completionCandidates = KindCandidates.class,
                description = "external, managed or human (hub default: external).")
        NodeKind kind;

        @Option(names = "--parent", paramLabel = "P", description = "Parent node (as a node: defaults to yourself).")
        String parent;

        @Option(names = "--label", paramLabel = "K=V", description = "A label; repeatable.")
        Map<String, String> labels = new LinkedHashMap<>();

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            ObjectNode body = JsonTrees.object().put("id", id);
            if (kind != null) {
                body.put("kind", kind.wire());
            }
            if (parent != null) {
                body.put("parent", parent);
            }
            if (!labels.isEmpty()) {
                body.set("labels", JsonTrees.texts(labels));
            }
            JsonNode node = client.post("/v1/nodes", body);
            emit(node, () -> {
                line("created", "id", field(node, "id"), "kind", field(node, "kind"), "parent", field(node, "parent"),
                        "depth", field(node, "depth"));
                printToken(out(), field(node, "token"));
            });
        }
    }

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
            description = "List the nodes you can see (admin: all).")
    static final class ListNodes extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get("/v1/nodes");
            emit(answer, () -> {
                // A gateway of a federation names each node's owner; a single-host hub's table is unchanged.
                boolean federated = answer.path("items").valueStream().anyMatch(node -> node.has("gateway"));
                Table table = federated ? new Table("ID", "KIND", "PARENT", "DEPTH", "LABELS", "GATEWAY")
                        : new Table("ID", "KIND", "PARENT", "DEPTH", "LABELS");
                answer.path("items").forEach(node -> {
                    if (federated) {
                        table.row(field(node, "id"), field(node, "kind"), field(node, "parent"), field(node, "depth"),
                                field(node, "labels"), field(node, "gateway"));
                    } else {
                        table.row(field(node, "id"), field(node, "kind"), field(node, "parent"), field(node, "depth"),
                                field(node, "labels"));
                    }
                });
                table.print(out());
            });
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show one node.")
    static final class ShowNode extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Node id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode node = client.get("/v1/nodes/" + HubClient.segment(id));
            emit(node, () -> {
                Table table = new Table();
                for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
                    String name = names.next();
                    table.row(name, field(node, name));
                }
                table.print(out());
            });
        }
    }

    @Command(name = "rm", aliases = "remove", mixinStandardHelpOptions = true,
            description = {"Remove a node (admin). Its token stops working; its inbox stays readable by admin.",
                    "With --json prints {\"id\":ID,\"deleted\":true} (the hub answers 204 without a body)."})
    static final class RemoveNode extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Node id.")
        String id;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            client.delete("/v1/nodes/" + HubClient.segment(id));
            emit(JsonTrees.object().put("id", id).put("deleted", true),
                    () -> line("deleted", "node", id));
        }
    }

    @Command(name = "routing", mixinStandardHelpOptions = true,
            description = {"Show a node's owner gateway and fallback gateways, or set its fallbacks (admin, on its "
                    + "owner): the gateways that take it over, in order, when its owner is gone."})
    static final class Routing extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "Node id.")
        String id;

        @Option(names = "--fallback", paramLabel = "GATEWAY", description = "A fallback gateway; repeatable, in order.")
        List<String> fallbacks = new ArrayList<>();

        @Option(names = "--clear", description = "Remove every fallback: the node waits for its owner.")
        boolean clear;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            String path = "/v1/nodes/" + HubClient.segment(id) + "/routing";
            if (clear && !fallbacks.isEmpty()) {
                throw new ParameterException(spec.commandLine(), "--clear and --fallback do not go together");
            }
            JsonNode routing = clear || !fallbacks.isEmpty()
                    ? client.put(path, JsonTrees.object().set("fallbacks",
                            JsonTrees.texts(fallbacks)))
                    : client.get(path);
            emit(routing, () -> new Table()
                    .row("node", field(routing, "node"))
                    .row("owner", field(routing, "owner"))
                    .row("fallbacks", routing.path("fallbacks").isEmpty() ? "-"
                            : String.join(", ", routing.path("fallbacks").valueStream().map(JsonNode::asText).toList()))
                    .print(out()));
        }
    }

    /** Accepts the contract's wire names, reusing the core's parser so there is one list of kinds. */
    static final class KindConverter implements ITypeConverter<NodeKind> {
        @Override
        public NodeKind convert(String value) {
            try {
                return NodeKind.parse(value);
            } catch (RuntimeException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    static final class KindCandidates implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(NodeKind.values()).map(NodeKind::wire).iterator();
        }
    }
}
