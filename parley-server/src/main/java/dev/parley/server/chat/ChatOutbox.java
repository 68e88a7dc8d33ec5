package dev.parley.server.chat;

import dev.parley.core.ChatPlatform;
import dev.parley.core.Chats;
import dev.parley.core.Envelope;
import dev.parley.core.Graph;
import dev.parley.core.NodeKind;
import dev.parley.server.metrics.Metrics;
import dev.parley.core.Notifier;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Carries envelopes to human nodes out to their chat platforms: as each commits, and again on
 * a pass every {@link #PASS} for what a platform did not take (its bridge down, a hub restart),
 * person by person, each one's oldest first. An envelope is acked {@code processed} once its
 * platform took it ({@code failed} when it refused it for good), so none is lost; delivery is
 * at least once (a pass that reads an envelope just committed may post it beside its own post).
 */
public final class ChatOutbox implements Notifier, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ChatOutbox.class.getName());
    static final Duration PASS = Duration.ofSeconds(15);
    private static final int PAGE = 100;

    private final Chats chats;
    private final Graph graph;
    private final Metrics metrics;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).followRedirects(HttpClient.Redirect.NEVER).build();
    /** Adapters with their own connection (IRC), by platform; platforms with a bridge get a webhook adapter. */
    private final Map<String, ChatAdapter> adapters = new ConcurrentHashMap<>();
    /** One thread: posts keep their order per platform. */
    private final ScheduledExecutorService worker = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("parley-chat-outbox").daemon().factory());

    public ChatOutbox(Chats chats, Graph graph, Metrics metrics) {
        this.chats = chats;
        this.graph = graph;
        this.metrics = metrics;
        worker.scheduleWithFixedDelay(this::pass, PASS.toMillis(), PASS.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Follows what the admin registered: an IRC network is connected to, its previous connection
     * (if any) closed; a bridge needs no connection of its own, so an IRC one of that id is closed.
     */
    public void follow(ChatPlatform platform) {
        switch (platform) {
            case ChatPlatform.Irc irc -> register(IrcAdapter.connect(irc, this::hear, this::ready));
            case ChatPlatform.Bridge bridge -> Optional.ofNullable(adapters.remove(bridge.id()))
                    .ifPresent(ChatAdapter::close);
        }
    }

    /** An adapter with its own connection, replacing (and closing) one of its platform; it calls {@link #ready} when it (re)connects. */
    public void register(ChatAdapter adapter) {
        Optional.ofNullable(adapters.put(adapter.platform(), adapter)).filter(before -> before != adapter)
                .ifPresent(ChatAdapter::close);
    }

    /** Whether a platform's own connection is up; empty for a bridge or a platform not registered. */
    public Optional<Boolean> connected(String platform) {
        return Optional.ofNullable(adapters.get(platform)).flatMap(ChatAdapter::connected);
    }

    /** A platform (re)connected: what it missed goes out now. */
    public void ready() {
        worker.execute(this::pass);
    }

    /** What people said, from any adapter, handed to {@link Chats#inbound}, and counted. */
    public Chats.Handled hear(dev.parley.core.ChatEvent event) {
        Chats.Handled handled = chats.inbound(event);
        metrics.chatHandled(handled);
        return handled;
    }

    /** Runs on the store's announcer thread: hands an envelope to a person over and never waits; others cost a lookup. */
    @Override
    public void committed(Envelope envelope) {
        if (graph.node(envelope.to()).filter(n -> n.kind() == NodeKind.HUMAN).isEmpty()) {
            return;
        }
        worker.execute(() -> {
            try {
                chats.outbound(envelope).ifPresent(this::post);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "envelope " + envelope.id() + " could not be posted to chat; the next pass"
                        + " tries again", e);
            }
        });
    }

    /** Posts what was not taken yet, platform by platform; a platform that refuses one is tried again next pass. */
    private void pass() {
        try {
            for (String platform : platforms()) {
                for (Chats.Outbound message : chats.unposted(platform, PAGE)) {
                    if (post(message) == ChatAdapter.Posted.LATER) {
                        break; // the platform is down or busy: the rest wait for the next pass, in order
                    }
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "the chat outbox pass failed; it runs again in " + PASS, e);
        }
    }

    private java.util.Set<String> platforms() {
        java.util.Set<String> all = new java.util.TreeSet<>(adapters.keySet());
        all.addAll(chats.bridgedPlatforms());
        return all;
    }

    /** Posts one message and settles its envelope as the platform answered; nothing to say is settled unposted. */
    private ChatAdapter.Posted post(Chats.Outbound message) {
        if (message.text().isEmpty() && message.card().isEmpty()) { // all of it internal, or a hub notice
            chats.posted(message);
            return ChatAdapter.Posted.TAKEN;
        }
        Optional<ChatAdapter> adapter = Optional.ofNullable(adapters.get(message.platform()))
                .or(() -> chats.platformOutbound(message.platform()).map(out -> new WebhookChatAdapter(message.platform(),
                        out, http)));
        ChatAdapter.Posted posted = adapter.map(a -> a.post(message)).orElse(ChatAdapter.Posted.LATER);
        switch (posted) {
            case TAKEN -> chats.posted(message);
            case REFUSED -> chats.refused(message, "platform " + message.platform() + " refused it");
            case LATER -> {
            }
        }
        return posted;
    }

    @Override
    public void close() {
        worker.shutdownNow();
        adapters.values().forEach(ChatAdapter::close);
        adapters.clear();
    }
}
