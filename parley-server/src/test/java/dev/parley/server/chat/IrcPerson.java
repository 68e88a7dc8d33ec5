package dev.parley.server.chat;

import net.engio.mbassy.listener.Handler;
import org.kitteh.irc.client.library.Client;
import org.kitteh.irc.client.library.event.channel.ChannelJoinEvent;
import org.kitteh.irc.client.library.event.channel.ChannelMessageEvent;
import org.kitteh.irc.client.library.event.client.ClientNegotiationCompleteEvent;
import org.kitteh.irc.client.library.event.connection.ClientConnectionEndedEvent;
import org.kitteh.irc.client.library.event.user.PrivateMessageEvent;
import org.kitteh.irc.client.library.event.user.UserQuitEvent;
import org.kitteh.irc.client.library.feature.sending.SingleDelaySender;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.awaitility.Awaitility.await;

/**
 * A person on the test's IRC server (the same client library as the hub's adapter): keeps every
 * message it sees, in a channel or privately, and every join it sees. It does not reconnect: a
 * test that restarts the server brings a new one.
 */
public final class IrcPerson implements AutoCloseable {
    private static final Duration WAIT = Duration.ofSeconds(60);

    /** A message seen: who said it, where (a channel, or this person's nick for a private one), what. */
    public record Heard(String from, String to, String text) {
    }

    private final String nick;
    private final Client client;
    private final List<Heard> heard = new CopyOnWriteArrayList<>();
    /** "nick channel" for each join seen, this person's own included. */
    private final List<String> joins = new CopyOnWriteArrayList<>();
    /** The nick of each person seen leaving the network. */
    private final List<String> quits = new CopyOnWriteArrayList<>();
    private volatile boolean registered;

    private IrcPerson(Ngircd server, String nick) {
        this.nick = nick;
        this.client = Client.builder().name("person-" + nick).nick(nick).user(nick).realName(nick)
                .server().host("127.0.0.1").port(server.port(), Client.Builder.Server.SecurityType.INSECURE)
                .password(Ngircd.PASSWORD).then()
                .listeners().exception(e -> { }).then()
                .management().messageSendingQueueSupplier(SingleDelaySender.getSupplier(0)).then()
                .build();
        client.getEventManager().registerEventListener(this);
    }

    /** Connects as {@code nick} and joins {@code channels}, returning once registered and in them. */
    static IrcPerson join(Ngircd server, String nick, String... channels) {
        IrcPerson person = new IrcPerson(server, nick);
        person.client.connect();
        await().atMost(WAIT).until(() -> person.registered);
        for (String channel : channels) {
            person.client.addChannel(channel);
            await().atMost(WAIT).until(() -> person.joins.contains(nick + " " + channel));
        }
        return person;
    }

    void say(String target, String text) {
        client.sendMessage(target, text);
    }

    /** The first message {@code from} said in {@code to} containing {@code part}, once there is one. */
    Heard awaitHeard(String from, String to, String part) {
        await().atMost(WAIT).until(() -> find(from, to, part).isPresent());
        return find(from, to, part).orElseThrow();
    }

    Optional<Heard> find(String from, String to, String part) {
        return heard.stream().filter(h -> h.from().equals(from) && h.to().equals(to) && h.text().contains(part))
                .findFirst();
    }

    List<Heard> heard() {
        return List.copyOf(heard);
    }

    /** Returns once this person saw {@code who} join {@code channel} {@code times} times in all. */
    void awaitJoins(String who, String channel, int times) {
        await().atMost(WAIT).until(() -> joins.stream().filter((who + " " + channel)::equals).count() >= times);
    }

    /** Returns once this person saw {@code who} leave the network. */
    void awaitQuit(String who) {
        await().atMost(WAIT).until(() -> quits.contains(who));
    }

    @Handler
    public void onQuit(UserQuitEvent event) {
        quits.add(event.getUser().getNick());
    }

    @Handler
    public void onRegistered(ClientNegotiationCompleteEvent event) {
        registered = true;
    }

    @Handler
    public void onEnded(ClientConnectionEndedEvent event) {
        event.setAttemptReconnect(false);
    }

    @Handler
    public void onJoin(ChannelJoinEvent event) {
        joins.add(event.getUser().getNick() + " " + event.getChannel().getName());
    }

    @Handler
    public void onChannelMessage(ChannelMessageEvent event) {
        heard.add(new Heard(event.getActor().getNick(), event.getChannel().getName(), event.getMessage()));
    }

    @Handler
    public void onPrivateMessage(PrivateMessageEvent event) {
        heard.add(new Heard(event.getActor().getNick(), nick, event.getMessage()));
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
