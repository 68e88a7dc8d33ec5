package dev.parley.server.chat;

import dev.parley.core.ChatEvent;
import dev.parley.core.ChatPlatform;
import dev.parley.core.Chats;
import dev.parley.core.Engagement;
import net.engio.mbassy.listener.Handler;
import org.kitteh.irc.client.library.Client;
import org.kitteh.irc.client.library.event.channel.ChannelMessageEvent;
import org.kitteh.irc.client.library.event.client.ClientNegotiationCompleteEvent;
import org.kitteh.irc.client.library.event.connection.ClientConnectionEndedEvent;
import org.kitteh.irc.client.library.event.user.PrivateMessageEvent;
import org.kitteh.irc.client.library.feature.CaseMapping;
import org.kitteh.irc.client.library.feature.sending.SingleDelaySender;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * The IRC adapter: the hub's own connection to an IRC network, as the platform's bot (Kitteh
 * IRC Client Library). A channel is a messaging group's room; a private message to the bot is
 * a DM whose room is the sender; a message starting {@code <nick>:} or {@code <nick>,}
 * mentions the bot. It only maps: every decision is {@link Chats}'. Out, each line is paced
 * (servers disconnect a client that floods) and the connection comes back by itself, with
 * backoff, whenever it drops.
 */
public final class IrcAdapter implements ChatAdapter {
    private static final Logger LOG = Logger.getLogger(IrcAdapter.class.getName());
    /** Text bytes of one PRIVMSG: a line is 512 bytes with the sender's prefix and the target the server adds. */
    static final int LINE_BYTES = 400;
    /** Lines of one message at most; IRC is for talk, the rest is cut with a note. */
    static final int MAX_LINES = 20;
    /** One line a second: what servers let a client send without an "Excess Flood". */
    static final Duration PACE = Duration.ofSeconds(1);
    /** Lines waiting in the client while more are refused: the rest waits in the hub, durably. */
    static final int BACKLOG = 20;
    static final Duration FIRST_RETRY = Duration.ofSeconds(1);
    static final Duration LAST_RETRY = Duration.ofSeconds(30);
    /** How often a bot that had to take another nick (its own was still held) asks for its own again. */
    static final Duration NICK_AGAIN = Duration.ofSeconds(30);
    /** Where an IRC message could not be addressed: a target with a space, comma or control character. */
    private static final Pattern TARGET = Pattern.compile("[^\\s,\\p{Cntrl}]{1,200}");

    private final ChatPlatform.Irc network;
    /** Where what people say goes: {@link ChatOutbox#hear}, which hands it to {@link Chats#inbound} and counts it. */
    private final java.util.function.Consumer<ChatEvent> hear;
    private final Runnable ready;
    private final AtomicReference<SingleDelaySender> outbound = new AtomicReference<>();
    private final Client client;
    /** One thread: what people say is handed in in the order it was said, off the client's network thread. */
    private final ScheduledExecutorService inbound;
    private volatile boolean connected;
    private volatile boolean closed;
    private volatile Duration retry = FIRST_RETRY;

    private IrcAdapter(ChatPlatform.Irc network, java.util.function.Consumer<ChatEvent> hear, Runnable ready) {
        this.network = network;
        this.hear = hear;
        this.ready = ready;
        this.inbound = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("parley-irc-"
                + network.id()).daemon().factory());
        this.client = Client.builder().name("parley-irc-" + network.id()).nick(network.nick()).user("parley")
                .realName("Parley hub")
                .server().host(network.host()).port(network.port(), network.tls() ? Client.Builder.Server.SecurityType.SECURE
                        : Client.Builder.Server.SecurityType.INSECURE).password(network.password().orElse(null)).then()
                .listeners().exception(e -> LOG.log(Level.FINE, "IRC platform " + network.id() + ": " + e, e)).then()
                .management().messageSendingQueueSupplier(c -> {
                    SingleDelaySender pacer = new SingleDelaySender(c, "parley pace", (int) PACE.toMillis());
                    outbound.set(pacer);
                    return pacer;
                }).then()
                .build();
        client.getEventManager().registerEventListener(this);
        // a server that still holds the nick of a connection that died gives it up at its ping timeout
        inbound.scheduleWithFixedDelay(() -> {
            if (connected && !client.getNick().equals(network.nick())) {
                client.setNick(network.nick());
            }
        }, NICK_AGAIN.toMillis(), NICK_AGAIN.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Connects to {@code network}; {@code ready} runs on every (re)connection, for what was missed meanwhile. */
    static IrcAdapter connect(ChatPlatform.Irc network, java.util.function.Consumer<ChatEvent> hear, Runnable ready) {
        IrcAdapter adapter = new IrcAdapter(network, hear, ready);
        LOG.info("IRC platform " + network.id() + ": connecting to " + network.server() + " as " + network.nick());
        adapter.client.connect();
        return adapter;
    }

    @Override
    public String platform() {
        return network.id();
    }

    @Override
    public Optional<Boolean> connected() {
        return Optional.of(connected);
    }

    /**
     * A PRIVMSG to the room (a channel, or a nick for a DM), else to the user: each line of the
     * text, cut to fit an IRC line. Refused while not connected, or while the client still has
     * {@link #BACKLOG} lines to send. A card is its text, which says how to answer it.
     */
    @Override
    public Posted post(Chats.Outbound message) {
        SingleDelaySender pacer = outbound.get();
        if (!connected || closed || pacer == null || pacer.getQueue().size() >= BACKLOG) {
            return Posted.LATER;
        }
        String target = message.room().orElse(message.user());
        if (!TARGET.matcher(target).matches()) {
            LOG.warning("IRC platform " + network.id() + ": envelope " + message.envelopeId() + " is for '" + target
                    + "', which IRC cannot address; it is not posted");
            return Posted.REFUSED;
        }
        for (String line : lines(message.text(), LINE_BYTES, MAX_LINES)) {
            client.sendMessage(target, line);
        }
        return Posted.TAKEN;
    }

    /** Registered: the channels are joined (before any line queued after them), then what waited goes out. */
    @Handler
    public void onRegistered(ClientNegotiationCompleteEvent event) {
        for (String channel : network.channels()) {
            try {
                client.addChannel(channel);
            } catch (IllegalArgumentException e) {
                LOG.warning("IRC platform " + network.id() + ": the server takes no channel named " + channel);
            }
        }
        retry = FIRST_RETRY;
        connected = true;
        LOG.info("IRC platform " + network.id() + ": connected to " + network.server() + " as " + client.getNick());
        ready.run();
    }

    /** The connection ended (or could not be made): tried again after a delay that doubles up to {@link #LAST_RETRY}. */
    @Handler
    public void onEnded(ClientConnectionEndedEvent event) {
        connected = false;
        if (closed || !event.canAttemptReconnect()) {
            return;
        }
        Duration delay = retry;
        retry = delay.multipliedBy(2).compareTo(LAST_RETRY) > 0 ? LAST_RETRY : delay.multipliedBy(2);
        event.setAttemptReconnect(true);
        event.setReconnectionDelay((int) delay.toMillis());
        LOG.info("IRC platform " + network.id() + ": no connection to " + network.server()
                + event.getCause().map(c -> " (" + c.getMessage() + ")").orElse("") + "; trying again in "
                + delay.toSeconds() + " s");
    }

    @Handler
    public void onChannelMessage(ChannelMessageEvent event) {
        String channel = event.getChannel().getName();
        hear(fold(channel), Engagement.RoomKind.GROUP, channel, event.getActor().getNick(), event.getMessage());
    }

    /** A private message to the bot: a DM, its room the sender. */
    @Handler
    public void onPrivateMessage(PrivateMessageEvent event) {
        if (event.isToClient()) {
            String nick = event.getActor().getNick();
            hear(fold(nick), Engagement.RoomKind.DM, nick, nick, event.getMessage());
        }
    }

    /** Hands a message in: the user is the nick as the server folds it, and IRC gives no message id, so it gets one. */
    private void hear(String room, Engagement.RoomKind kind, String roomName, String nick, String text) {
        String me = client.getNick();
        if (caseMapping().areEqualIgnoringCase(nick, me)) {
            return;
        }
        Optional<String> addressed = addressed(text, me, caseMapping());
        inbound.execute(() -> {
            try {
                hear.accept(new ChatEvent(network.id(), room, kind, roomName, fold(nick), nick,
                        UUID.randomUUID().toString(), addressed.orElse(text), addressed.isPresent(), Optional.empty(),
                        Optional.empty(), Instant.now(), Optional.empty()));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "IRC platform " + network.id() + ": a message from " + nick + " in " + roomName
                        + " could not be handed in", e);
            }
        });
    }

    private CaseMapping caseMapping() {
        return client.getServerInfo().getCaseMapping();
    }

    private String fold(String name) {
        return caseMapping().toLowerCase(name);
    }

    /** The text after {@code <nick>:} or {@code <nick>,} at its start (the nick as the server folds it), if it begins so. */
    static Optional<String> addressed(String text, String nick, CaseMapping mapping) {
        int n = nick.length();
        if (text.length() > n && (text.charAt(n) == ':' || text.charAt(n) == ',')
                && mapping.areEqualIgnoringCase(text.substring(0, n), nick)) {
            return Optional.of(text.substring(n + 1).strip());
        }
        return Optional.empty();
    }

    /**
     * The PRIVMSG lines of {@code text}: one per line of it (blank lines left out, as IRC has
     * none), each cut to at most {@code maxBytes} of UTF-8 between words where one ends in its
     * second half, never inside a character; NUL and CTCP's \u0001 left out. Past {@code maxLines}
     * the last line says how many more there were.
     */
    static List<String> lines(String text, int maxBytes, int maxLines) {
        List<String> out = new ArrayList<>();
        for (String line : text.replace("\u0000", "").replace("\u0001", "").split("\r\n|\r|\n")) {
            String rest = line.stripTrailing();
            while (!rest.isBlank()) {
                int end = Math.max(fit(rest, maxBytes), Character.charCount(rest.codePointAt(0)));
                int space = rest.lastIndexOf(' ', end);
                if (end < rest.length() && space > end / 2) {
                    end = space;
                }
                out.add(rest.substring(0, end).stripTrailing());
                rest = rest.substring(end).stripLeading();
            }
        }
        if (out.size() > maxLines) {
            int more = out.size() - maxLines + 1;
            out = new ArrayList<>(out.subList(0, maxLines - 1));
            out.add("[" + more + " more lines: too long for IRC]");
        }
        return out;
    }

    /** How many chars of {@code text} make its longest start of at most {@code maxBytes} UTF-8 bytes, whole characters. */
    private static int fit(String text, int maxBytes) {
        int bytes = 0;
        int i = 0;
        while (i < text.length()) {
            int cp = text.codePointAt(i);
            int size = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (bytes + size > maxBytes) {
                break;
            }
            bytes += size;
            i += Character.charCount(cp);
        }
        return i;
    }

    /** Leaves the network (QUIT) and stops reconnecting. */
    @Override
    public void close() {
        closed = true;
        connected = false;
        client.shutdown("Parley hub: " + network.id() + " closed");
        inbound.shutdown();
        try {
            inbound.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
