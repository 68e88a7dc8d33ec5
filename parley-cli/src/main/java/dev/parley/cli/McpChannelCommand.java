package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.mcp.ChannelBridge;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code parley mcp channel --name NODE}: the stdio MCP server Claude Code spawns for a
 * session that is node NODE. stdout carries JSON-RPC and nothing else — everything else
 * (logs, errors, stray prints) goes to stderr.
 */
@Command(name = "channel", mixinStandardHelpOptions = true,
        description = {"Serve MCP on stdio for a Claude Code session acting as node --name (PARLEY_URL, PARLEY_TOKEN):"
                + " push its inbox as channel messages and give it the send, reply, ack, inbox, peers and status tools.",
                "stdout carries only JSON-RPC; logs go to stderr."})
final class McpChannelCommand implements Callable<Integer> {
    private static final Duration IDLE = Duration.ofSeconds(45);

    @Mixin
    HubOptions hub;

    @Spec
    CommandSpec spec;

    @Option(names = "--name", required = true, paramLabel = "NODE",
            description = "The node this session is; PARLEY_TOKEN must be its token.")
    String name;

    @Option(names = "--approver", paramLabel = "NODE",
            description = "Where permission prompts are relayed (default: the node's parent; none for a root).")
    String approver;

    @Option(names = "--repush-after", paramLabel = "DURATION", defaultValue = "60s", converter = DurationConverter.class,
            description = "Push a message again while it is neither replied to nor acked after this long (default: ${DEFAULT-VALUE}).")
    Duration repushAfter;

    @Option(names = "--repush-limit", paramLabel = "N", defaultValue = "20",
            description = "Push one message at most N times (default: ${DEFAULT-VALUE}); inbox lists it after that.")
    int repushLimit;

    @Override
    public Integer call() {
        // The protocol owns the real stdout; anything else that prints goes to stderr.
        OutputStream protocol = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        PrintWriter err = spec.commandLine().getErr();
        if (repushLimit < 1) {
            throw new ParameterException(spec.commandLine(), "--repush-limit must be 1 or more");
        }
        try (HubClient client = hub.connect(true)) {
            HttpHubPort port = new HttpHubPort(client);
            Optional<String> relayTo = verify(port);
            ChannelBridge.Settings settings = new ChannelBridge.Settings(name, relayTo, repushAfter, repushLimit,
                    ParleyVersion.current());
            new ChannelBridge(settings, port, new InboxFollower(client, IDLE), InstantSource.system())
                    .serve(System.in, protocol);
            return ExitStatus.OK;
        } catch (HubException e) {
            err.println("parley: " + e.code() + ": " + e.getMessage());
            return e.exitStatus();
        } catch (dev.parley.mcp.HubRefusal e) {
            err.println("parley: " + e.code() + ": " + e.getMessage());
            return switch (e.status()) {
                case 401 -> ExitStatus.UNAUTHORIZED;
                case 403 -> ExitStatus.FORBIDDEN;
                case 404 -> ExitStatus.NOT_FOUND;
                case 0 -> ExitStatus.UNREACHABLE;
                default -> ExitStatus.REFUSED;
            };
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ExitStatus.INTERRUPTED;
        } finally {
            err.flush();
        }
    }

    /**
     * The node exists, the token is that node's (not the admin's, not another node's), and
     * the approver of permission prompts is known. Returns the approver.
     */
    private Optional<String> verify(HttpHubPort port) {
        JsonNode node = port.node(name);
        JsonNode peers = port.peers();
        String self = peers.path("node").asText();
        if (!self.equals(name)) {
            throw new dev.parley.mcp.HubRefusal("identity_mismatch", "--name is " + name
                    + " but PARLEY_TOKEN belongs to node " + self, 403);
        }
        if (approver != null) {
            port.node(approver); // exists and is visible
            return Optional.of(approver);
        }
        JsonNode parent = node.path("parent");
        return parent.isTextual() ? Optional.of(parent.asText()) : Optional.empty();
    }
}
