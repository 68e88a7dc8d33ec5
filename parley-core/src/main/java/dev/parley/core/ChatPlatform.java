package dev.parley.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A chat platform the admin registered: one whose bridge hands messages in over the generic
 * chat webhook ({@link Bridge}), or an IRC network the hub connects to itself ({@link Irc}).
 * One id is one platform of one kind: registered again as the other kind, it is replaced.
 */
public sealed interface ChatPlatform {
    String id();

    /** A bridge: signs what it hands in with its secret (sealed, never shown) and takes chat messages out at {@code outboundUrl}, if set. */
    record Bridge(String id, Optional<String> outboundUrl) implements ChatPlatform {
    }

    /**
     * An IRC network: its server ({@code host}, {@code port}, over TLS or not, with the
     * connection password if it has one), the bot's nick, and the channels the bot joins, each
     * the room of a messaging group (in lower case, as the server folds them).
     */
    record Irc(String id, String host, int port, boolean tls, String nick, List<String> channels,
               Optional<String> password) implements ChatPlatform {
        /** Most channels one network's bot joins. */
        public static final int MAX_CHANNELS = 50;
        private static final Pattern HOST = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|[0-9A-Fa-f:.]{2,45}");
        private static final Pattern SERVER = Pattern.compile("(\\[([^]]+)]|[^:\\[\\]]+)(?::([0-9]{1,5}))?");
        /** RFC 2812's nick, with the length today's servers allow. */
        private static final Pattern NICK = Pattern.compile("[A-Za-z\\[\\]\\\\`_^{|}][A-Za-z0-9\\[\\]\\\\`_^{|}-]{0,29}");
        private static final Pattern CHANNEL = Pattern.compile("[#&][^\\s,:\\p{Cntrl}]{1,49}");

        public Irc {
            MessagingGroup.requireText("platform", id);
            if (!HOST.matcher(host).matches() || port < 1 || port > 65535) {
                throw invalid("irc.server must be host:port: a host name or IP address, and a port from 1 to 65535");
            }
            if (!NICK.matcher(nick).matches()) {
                throw invalid("irc.nick must be 1 to 30 characters: a letter or one of []\\`_^{|} first, then"
                        + " letters, digits, those or '-'");
            }
            List<String> folded = new ArrayList<>();
            for (String channel : channels) {
                if (!CHANNEL.matcher(channel).matches()) {
                    throw invalid("irc.channels: '" + channel + "' is not a channel name (# or & and then 1 to 49"
                            + " characters without spaces, commas, colons or control characters)");
                }
                String lower = channel.toLowerCase(Locale.ROOT);
                if (!folded.contains(lower)) {
                    folded.add(lower);
                }
            }
            if (folded.size() > MAX_CHANNELS) {
                throw invalid("irc.channels may name at most " + MAX_CHANNELS + " channels");
            }
            channels = List.copyOf(folded);
            if (password.isPresent() && (password.get().isEmpty() || password.get().length() > 256
                    || password.get().chars().anyMatch(Character::isISOControl))) {
                throw invalid("irc.password must be 1 to 256 characters without control characters");
            }
        }

        /**
         * An IRC network as the admin gives it: {@code server} is {@code host:port}, {@code host}
         * (port 6697 with TLS, else 6667) or {@code [ipv6]:port}.
         */
        public static Irc of(String id, String server, boolean tls, String nick, List<String> channels,
                             Optional<String> password) {
            Matcher m = SERVER.matcher(server);
            if (!m.matches()) {
                throw invalid("irc.server must be host:port: a host name or IP address, and a port from 1 to 65535");
            }
            String host = m.group(2) != null ? m.group(2) : m.group(1);
            int port = m.group(3) != null ? Integer.parseInt(m.group(3)) : tls ? 6697 : 6667;
            return new Irc(id, host, port, tls, nick, channels, password);
        }

        /** {@code host:port}, an IPv6 address in brackets. */
        public String server() {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }

        /** Never the password: a network may be logged. */
        @Override
        public String toString() {
            return "irc " + id + " at " + server() + (tls ? " (TLS)" : "") + " as " + nick + " in " + channels;
        }

        private static ParleyException invalid(String message) {
            return new ParleyException(ErrorCode.INVALID_REQUEST, message);
        }
    }
}
