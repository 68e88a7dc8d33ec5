package dev.parley.cli;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import reactor.core.publisher.Mono;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * {@code parley mcp channel} as Claude Code runs it: a child JVM on this test's classpath,
 * spoken to by the official MCP Java SDK client over stdio. The client transport is wrapped
 * so the test sees every notification the bridge sends (the SDK client drops methods it does
 * not know, like {@code notifications/claude/channel}) and can send Claude Code's custom
 * notifications ({@code notifications/claude/channel/permission_request}).
 */
final class McpBridgeProcess implements AutoCloseable {
    /**
     * How long a fresh bridge JVM may take to start and answer. Its start is most of that: at
     * load 27 on two cores a JVM took 37 s to reach its first line of test code. A bound for a
     * hang, not a measure: a test that waits for an answer waits for it.
     */
    static final Duration STARTUP = Duration.ofSeconds(120);
    final McpSyncClient client;
    final BlockingQueue<McpSchema.JSONRPCNotification> notifications = new LinkedBlockingQueue<>();
    final ConcurrentLinkedQueue<String> stderr = new ConcurrentLinkedQueue<>();
    private final Recording transport;

    McpBridgeProcess(String url, String token, String... args) {
        ServerParameters params = ServerParameters.builder(javaBin()).args(command(args))
                .env(Map.of("PARLEY_URL", url, "PARLEY_TOKEN", token)).build();
        StdioClientTransport stdio = new StdioClientTransport(params, McpJsonDefaults.getMapper());
        stdio.setStdErrorHandler(stderr::add);
        this.transport = new Recording(stdio, notifications);
        this.client = McpClient.sync(transport)
                .requestTimeout(STARTUP) // the initialize request waits for the JVM's start
                .initializationTimeout(STARTUP)
                .clientInfo(McpSchema.Implementation.builder("parley-test", "1").build())
                .build();
    }

    /** The java binary of this JVM. */
    static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** JVM arguments and {@code parley mcp channel ARGS} on this test's classpath. */
    static List<String> command(String... args) {
        List<String> command = new ArrayList<>(List.of("--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), "dev.parley.cli.Main", "mcp", "channel"));
        command.addAll(List.of(args));
        return command;
    }

    /** The next notification with {@code method}, skipping others; fails after {@code wait}. */
    McpSchema.JSONRPCNotification next(String method, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            McpSchema.JSONRPCNotification n = left <= 0 ? null : notifications.poll(left, TimeUnit.NANOSECONDS);
            if (n == null) {
                throw new AssertionError("no " + method + " within " + wait + "; bridge stderr:\n" + String.join("\n", stderr));
            }
            if (n.method().equals(method)) {
                return n;
            }
        }
    }

    /** Sends a notification to the bridge, as Claude Code would. */
    void notify(String method, Object params) {
        transport.sendMessage(new McpSchema.JSONRPCNotification(McpSchema.JSONRPC_VERSION, method, params)).block();
    }

    @Override
    public void close() {
        client.closeGracefully();
    }

    /** Passes everything through, recording inbound notifications. */
    private record Recording(McpClientTransport delegate, BlockingQueue<McpSchema.JSONRPCNotification> seen)
            implements McpClientTransport {
        @Override
        public Mono<Void> connect(Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
            return delegate.connect(message -> handler.apply(message.doOnNext(m -> {
                if (m instanceof McpSchema.JSONRPCNotification n) {
                    seen.add(n);
                }
            })));
        }

        @Override
        public Mono<Void> closeGracefully() {
            return delegate.closeGracefully();
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return delegate.sendMessage(message);
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return delegate.unmarshalFrom(data, typeRef);
        }

        @Override
        public List<String> protocolVersions() {
            return delegate.protocolVersions();
        }
    }
}
