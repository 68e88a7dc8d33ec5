package dev.parley.core;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The one way agents see a conversation, whatever runs them: a {@code <context
 * timezone="…"/>} header, then each message as {@code <message id from sender time reply_to>},
 * its time in the user's zone in en-US 12-hour form ("Jan 1, 2024, 1:30 PM"), a reply carrying
 * the message it quotes ({@code <quoted_message from>}); and the way back: what an agent keeps
 * {@code <internal>} is left out of what people see.
 */
public final class PromptFormat {
    /** How many messages of a conversation a turn shows when nothing says otherwise. */
    public static final int DEFAULT_MAX_MESSAGES = 10;
    /** The most a turn may show. */
    public static final int MAX_MESSAGES = 100;
    /** The node label that names a person's time zone (IANA). */
    public static final String TIME_ZONE_LABEL = "timezone";
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("MMM d, yyyy, h:mm a", Locale.US);
    /** An unclosed tag (an answer cut short) hides the rest: what was meant to stay internal never leaks. */
    private static final Pattern INTERNAL = Pattern.compile("(?s)<internal>.*?(</internal>|$)");

    private PromptFormat() {
    }

    /** One message of a conversation as an agent is shown it. */
    public record Line(String id, NodeId from, String sender, Instant at, String text, Optional<Quote> replyTo) {
    }

    /** The message a reply answers: its id, who said it, what it said. */
    public record Quote(String id, String from, String text) {
    }

    /**
     * The messages, oldest first, as the agent's prompt, times in {@code timezone}; a zone that
     * is not an IANA zone falls back to UTC (and the header says UTC).
     */
    public static String prompt(List<Line> messages, String timezone) {
        ZoneId zone = zone(timezone);
        StringBuilder out = new StringBuilder("<context timezone=\"").append(escape(zone.getId())).append("\"/>\n");
        out.append("<messages>\n");
        for (Line m : messages) {
            out.append("<message id=\"").append(escape(m.id())).append("\" from=\"").append(escape(m.from().value()))
                    .append("\" sender=\"").append(escape(m.sender())).append("\" time=\"")
                    .append(escape(TIME.format(m.at().atZone(zone)))).append('"');
            m.replyTo().ifPresent(q -> out.append(" reply_to=\"").append(escape(q.id())).append('"'));
            out.append('>');
            m.replyTo().filter(q -> !q.text().isEmpty()).ifPresent(q -> out.append("\n  <quoted_message from=\"")
                    .append(escape(q.from())).append("\">").append(escape(q.text())).append("</quoted_message>\n"));
            out.append(escape(m.text())).append("</message>\n");
        }
        return out.append("</messages>").toString();
    }

    /** A message an envelope carries, as a prompt line: a chat message by what its meta says of it. */
    public static Line line(Envelope envelope) {
        var meta = envelope.meta();
        Instant at = Optional.ofNullable(meta.get(Chats.SAID_AT)).flatMap(PromptFormat::instant).orElse(envelope.createdAt());
        Optional<Quote> quote = Optional.ofNullable(meta.get(Chats.REPLY_TO)).map(id -> new Quote(id,
                meta.getOrDefault(Chats.REPLY_FROM, ""), meta.getOrDefault(Chats.QUOTE, "")));
        return new Line(meta.getOrDefault(Chats.MESSAGE_ID, envelope.id()), envelope.from(),
                meta.getOrDefault(Chats.USER_NAME, envelope.from().value()), at,
                envelope.text().or(() -> envelope.data().map(JsonText::json)).orElse(""), quote);
    }

    /** What people see of an agent's text: {@code <internal>…</internal>} left out, trimmed. */
    public static String visible(String text) {
        return INTERNAL.matcher(text).replaceAll("").strip();
    }

    /** {@code timezone} as a zone when it is an IANA zone name, else UTC. */
    public static ZoneId zone(String timezone) {
        return ZoneId.of(ZoneId.getAvailableZoneIds().contains(timezone) ? timezone : "UTC");
    }

    private static Optional<Instant> instant(String text) {
        try {
            return Optional.of(Instant.parse(text));
        } catch (DateTimeException e) {
            return Optional.empty();
        }
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
