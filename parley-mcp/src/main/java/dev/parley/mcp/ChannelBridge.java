package dev.parley.mcp;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;

import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code parley mcp channel}: the MCP server Claude Code spawns, built on the official MCP
 * Java SDK over {@link ChannelStdioTransport}. It declares the {@code claude/channel}
 * capability (and {@code claude/channel/permission} when there is an approver), serves the
 * {@link ChannelTools}, follows the node's inbox and pushes each envelope as
 * {@code notifications/claude/channel}, pushes open envelopes again ({@link Repusher}) and
 * relays permission prompts ({@link PermissionRelay}). It ends when its stdin ends.
 */
public final class ChannelBridge {
    private static final Logger LOG = Logger.getLogger(ChannelBridge.class.getName());
    private static final Duration NOTIFY_TIMEOUT = Duration.ofSeconds(30);

    /**
     * How the bridge runs.
     *
     * @param node        the node this session is (its token is the one the hub port uses)
     * @param approver    the node permission prompts go to (the node's parent unless configured); none: no relay
     * @param repushAfter how long a pushed envelope may stay open before it is pushed again
     * @param repushLimit how many times one envelope is pushed at most
     * @param version     the server version shown at initialize
     */
    public record Settings(String node, Optional<String> approver, Duration repushAfter, int repushLimit,
                           String version) {
    }

    private final Settings settings;
    private final HubPort hub;
    private final InboxSource inbox;
    private final InstantSource clock;

    public ChannelBridge(Settings settings, HubPort hub, InboxSource inbox, InstantSource clock) {
        this.settings = settings;
        this.hub = hub;
        this.inbox = inbox;
        this.clock = clock;
    }

    /** Serves MCP on {@code in}/{@code out} until {@code in} ends. */
    public void serve(InputStream in, OutputStream out) throws InterruptedException {
        McpJsonMapper mapper = McpJsonDefaults.getMapper();
        Notifier notifier = new Notifier();
        Optional<PermissionRelay> relay = settings.approver()
                .map(approver -> new PermissionRelay(hub, approver, notifier::send));
        Map<String, Consumer<JsonNode>> custom = relay.<Map<String, Consumer<JsonNode>>>map(r ->
                Map.of(PermissionRelay.REQUEST_METHOD, r::requested)).orElseGet(() -> Map.of(
                PermissionRelay.REQUEST_METHOD, params -> LOG.warning("a permission prompt arrived, but this node has"
                        + " no parent and no --approver: nobody to relay it to")));
        ChannelStdioTransport transport = new ChannelStdioTransport(mapper, in, out,
                ChannelStdioTransport.DEFAULT_MAX_LINE, custom);
        notifier.transport = transport;

        Map<String, Object> experimental = new LinkedHashMap<>();
        experimental.put("claude/channel", Map.of());
        relay.ifPresent(r -> experimental.put("claude/channel/permission", Map.of()));
        ChannelTools tools = new ChannelTools(hub);
        McpSyncServer server = McpServer.sync(transport)
                .serverInfo("parley", settings.version())
                .instructions(Instructions.forChannel(settings.node(), settings.repushAfter(), settings.approver()))
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).experimental(experimental).build())
                .validateToolInputs(false) // ChannelTools checks arguments, the same way on every transport
                .jsonSchemaValidator(new FixedToolSchemas())
                .tools(toolSpecifications(tools))
                .build();

        Repusher repusher = new Repusher(hub, settings.repushAfter(), settings.repushLimit(),
                envelope -> notifier.push(envelope, "again"), clock);
        Thread follower = Thread.ofVirtual().name("parley-inbox").unstarted(() -> follow(transport, notifier, relay,
                repusher));
        follower.start();
        repusher.start();
        try {
            transport.awaitEnd(Duration.ofSeconds(10));
        } finally {
            follower.interrupt();
            repusher.close();
            server.closeGracefully();
        }
    }

    /** Once the client is initialized, pushes every envelope of the inbox. */
    private void follow(ChannelStdioTransport transport, Notifier notifier, Optional<PermissionRelay> relay,
                        Repusher repusher) {
        try {
            while (!transport.awaitInitialized(1, TimeUnit.SECONDS)) {
                // Claude Code registers its channel listener at initialization; earlier pushes would be lost.
            }
            inbox.follow(envelope -> {
                if (relay.isPresent() && relay.get().answered(envelope)) {
                    return;
                }
                if (notifier.push(envelope, "new")) {
                    repusher.pushed(envelope);
                }
            });
        } catch (InterruptedException e) {
            // the session ended
        } catch (RuntimeException e) {
            LOG.log(Level.SEVERE, "following the inbox failed; no more messages are pushed", e);
        }
    }

    private static List<McpServerFeatures.SyncToolSpecification> toolSpecifications(ChannelTools tools) {
        return ChannelTools.SPECS.stream().map(spec -> McpServerFeatures.SyncToolSpecification.builder()
                .tool(McpSchema.Tool.builder(spec.name(), ChannelTools.schemaMap(spec))
                        .description(spec.description())
                        .build())
                .callHandler((exchange, request) -> toSdk(tools.call(spec.name(),
                        McpJson.MAPPER.valueToTree(request.arguments()), McpJson.MAPPER.valueToTree(request.meta()))))
                .build()).toList();
    }

    private static McpSchema.CallToolResult toSdk(ToolResult result) {
        McpSchema.CallToolResult.Builder out = McpSchema.CallToolResult.builder()
                .addTextContent(result.text())
                .isError(result.isError());
        result.structured().ifPresent(s -> out.structuredContent(
                McpJson.MAPPER.convertValue(s, new TypeReference<Map<String, Object>>() {
                })));
        return out.build();
    }

    /** Sends notifications to the client, logging (never throwing) when it cannot. */
    private static final class Notifier {
        private volatile ChannelStdioTransport transport;

        boolean push(JsonNode envelope, String why) {
            boolean sent = send(ChannelNotification.METHOD, ChannelNotification.params(envelope));
            if (sent) {
                LOG.fine("pushed " + envelope.path("id").asText() + " (" + why + ")");
            }
            return sent;
        }

        boolean send(String method, Map<String, Object> params) {
            try {
                transport.notifyClients(method, params).block(NOTIFY_TIMEOUT);
                return true;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "could not send " + method + " to the client: " + e.getMessage());
                return false;
            }
        }
    }
}
