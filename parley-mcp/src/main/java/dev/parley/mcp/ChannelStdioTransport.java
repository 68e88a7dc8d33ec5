package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import reactor.core.publisher.Mono;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * MCP's stdio transport for the SDK's server session: newline-delimited JSON-RPC on the
 * given streams. Unlike the SDK's own stdio provider, which stops reading at the first line
 * it cannot decode, this one answers bad input and carries on: a line that is not JSON gets
 * -32700, a batch or a malformed message -32600, an oversized line -32600 (and is skipped
 * up to its end), bad {@code params} -32602 — the session survives all of them. It also
 * answers {@code ping} and refuses other requests before {@code initialize} (the SDK would
 * hold them forever), and hands the custom notifications it is given handlers for (Claude
 * Code's {@code notifications/claude/channel/permission_request}) to those handlers.
 * Everything written goes through one lock, one line per message.
 */
public final class ChannelStdioTransport implements McpServerTransportProvider {
    private static final Logger LOG = Logger.getLogger(ChannelStdioTransport.class.getName());
    /** The longest line read, in characters: 4 MiB, far above any tool call the hub would accept. */
    public static final int DEFAULT_MAX_LINE = 4 * 1024 * 1024;

    private final McpJsonMapper mapper;
    private final InputStream in;
    private final OutputStream out;
    private final int maxLine;
    private final Map<String, Consumer<JsonNode>> customNotifications;
    private final ExecutorService handlers = Executors.newVirtualThreadPerTaskExecutor();
    private final CountDownLatch initialized = new CountDownLatch(1);
    private final CountDownLatch ended = new CountDownLatch(1);
    private final AtomicBoolean closing = new AtomicBoolean();
    private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
    private final Object writeLock = new Object();
    private volatile boolean initializeSeen;
    private volatile McpServerSession session;

    public ChannelStdioTransport(McpJsonMapper mapper, InputStream in, OutputStream out, int maxLine,
                                 Map<String, Consumer<JsonNode>> customNotifications) {
        this.mapper = mapper;
        this.in = in;
        this.out = out;
        this.maxLine = maxLine;
        this.customNotifications = Map.copyOf(customNotifications);
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory sessionFactory) {
        this.session = sessionFactory.create(new SessionTransport());
        Thread.ofPlatform().name("parley-mcp-stdin").daemon(true).start(this::read);
    }

    /** Waits until the client has sent {@code notifications/initialized}. */
    public boolean awaitInitialized(long timeout, TimeUnit unit) throws InterruptedException {
        return initialized.await(timeout, unit);
    }

    /**
     * Waits until the input ends (the client went away), then up to {@code drain} for the
     * requests still being handled, so a tool call under way is not cut off mid-request.
     */
    public void awaitEnd(java.time.Duration drain) throws InterruptedException {
        ended.await();
        long deadline = System.nanoTime() + drain.toNanos();
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        McpServerSession current = session;
        if (current == null) {
            return Mono.error(new IllegalStateException("no session yet"));
        }
        return current.sendNotification(method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.fromRunnable(() -> {
            closing.set(true);
            handlers.shutdown();
        });
    }

    private void read() {
        try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8)) {
            StringBuilder line = new StringBuilder();
            boolean oversized = false;
            int c;
            while (!closing.get() && (c = reader.read()) != -1) {
                if (c == '\n') {
                    if (oversized) {
                        write(JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "Invalid Request: the message is longer than "
                                + maxLine + " characters and was dropped"));
                    } else {
                        accept(line.toString());
                    }
                    line.setLength(0);
                    oversized = false;
                } else if (!oversized) {
                    if (line.length() >= maxLine) {
                        oversized = true;
                        line.setLength(0);
                        line.trimToSize();
                    } else {
                        line.append((char) c);
                    }
                }
            }
            if (!oversized && !line.isEmpty()) {
                accept(line.toString());
            }
        } catch (IOException | UncheckedIOException e) {
            if (!closing.get()) {
                LOG.log(Level.WARNING, "stdin failed; the session ends", e);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.SEVERE, "unexpected failure reading stdin; the session ends", e);
        } finally {
            closing.set(true);
            McpServerSession current = session;
            if (current != null) {
                current.close();
            }
            ended.countDown();
        }
    }

    /** Handles one line; nothing a client sends makes this throw. */
    private void accept(String text) {
        if (text.isBlank()) {
            return;
        }
        JsonRpc.Checked checked = JsonRpc.parse(text.strip());
        if (!checked.accepted()) {
            checked.answer().ifPresent(this::write);
            return;
        }
        JsonRpc.Kind kind = checked.kind().orElseThrow();
        String method = checked.method();
        if (kind == JsonRpc.Kind.NOTIFICATION && customNotifications.containsKey(method)) {
            Consumer<JsonNode> handler = customNotifications.get(method);
            JsonNode params = checked.message().path("params");
            handlers.execute(() -> {
                try {
                    handler.accept(params);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "handling " + method + " failed", e);
                }
            });
            return;
        }
        if (kind == JsonRpc.Kind.REQUEST && !initializeSeen) {
            if (method.equals(McpSchema.METHOD_INITIALIZE)) {
                initializeSeen = true;
            } else if (method.equals(McpSchema.METHOD_PING)) {
                write(JsonRpc.result(checked.message().get("id"), McpJson.object()));
                return;
            } else {
                write(JsonRpc.error(checked.message().get("id"), JsonRpc.INVALID_REQUEST,
                        "Invalid Request: the session is not initialized; send initialize first"));
                return;
            }
        }
        McpSchema.JSONRPCMessage message;
        try {
            message = McpSchema.deserializeJsonRpcMessage(mapper, text);
        } catch (IOException | RuntimeException e) {
            // The SDK's mapper is Jackson 3, whose messages name Java types: the client gets our sentence.
            LOG.log(Level.FINE, "an MCP message did not fit the SDK's types", e);
            write(JsonRpc.error(kind == JsonRpc.Kind.REQUEST ? checked.message().get("id") : null,
                    JsonRpc.INVALID_REQUEST, "Invalid Request: a field of the message does not have the type MCP"
                            + " defines for it"));
            return;
        }
        if (kind == JsonRpc.Kind.NOTIFICATION && method.equals(McpSchema.METHOD_NOTIFICATION_INITIALIZED)) {
            initialized.countDown();
        }
        if (kind == JsonRpc.Kind.REQUEST) {
            inFlight.incrementAndGet();
        }
        session.handle(message)
                .doFinally(signal -> {
                    if (kind == JsonRpc.Kind.REQUEST) {
                        inFlight.decrementAndGet();
                    }
                })
                .subscribe(ignored -> {
                }, e -> LOG.log(Level.WARNING, "handling " + method + " failed", e));
    }

    private void write(ObjectNode message) {
        writeLine(McpJson.text(message));
    }

    private void writeLine(String json) {
        byte[] bytes = (json + "\n").getBytes(StandardCharsets.UTF_8);
        synchronized (writeLock) {
            try {
                out.write(bytes);
                out.flush();
            } catch (IOException e) {
                if (!closing.get()) {
                    LOG.log(Level.WARNING, "stdout failed; the client has gone", e);
                }
                closing.set(true);
            }
        }
    }

    /** The one session of this stdio connection, as the SDK sees it. */
    private final class SessionTransport implements McpServerTransport {
        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> {
                String json;
                try {
                    json = mapper.writeValueAsString(message);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                // Compact JSON has no raw line breaks; guard anyway, one message per line is the framing.
                writeLine(json.replace("\r", "\\r").replace("\n", "\\n"));
            });
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return mapper.convertValue(data, typeRef);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return ChannelStdioTransport.this.closeGracefully();
        }
    }
}
