package dev.parley.core;

import java.time.Instant;
import java.util.Optional;

/**
 * A message said in a chat room, as an adapter hands it in: which platform and room (and what
 * kind of room), who said it (the platform's user id and display name), the platform's id of
 * the message (a message handed in twice is taken once), its text, whether it mentions the
 * bot, its thread, the message it replies to, when it was said, and, when the platform knows
 * it, the user's time zone (an IANA name; anything else is dropped: agents then see UTC).
 */
public record ChatEvent(String platform, String room, Engagement.RoomKind roomKind, String roomName, String user,
                        String userName, String messageId, String text, boolean mentionsBot, Optional<String> thread,
                        Optional<Reply> replyTo, Instant at, Optional<String> userTimeZone) {
    /** Most characters of text a chat message may have. */
    public static final int MAX_TEXT = 16 * 1024;

    public ChatEvent {
        MessagingGroup.requireText("platform", platform);
        MessagingGroup.requireText("room", room);
        MessagingGroup.requireText("user", user);
        MessagingGroup.requireText("messageId", messageId);
        if (userName.isBlank() || userName.length() > MessagingGroup.MAX_ID) {
            userName = user;
        }
        if (roomName.isBlank() || roomName.length() > MessagingGroup.MAX_ID) {
            roomName = room;
        }
        if (text.length() > MAX_TEXT) {
            throw new ParleyException(ErrorCode.PAYLOAD_TOO_LARGE, "a chat message is at most " + MAX_TEXT
                    + " characters; this one has " + text.length());
        }
        thread.ifPresent(t -> MessagingGroup.requireText("thread", t));
        userTimeZone = userTimeZone.filter(zone -> PromptFormat.zone(zone).getId().equals(zone)); // an IANA name, or none
    }

    /** The message this one replies to: its platform id, who said it, and its text (quoted to the agent). */
    public record Reply(String messageId, String from, String text) {
        public Reply {
            MessagingGroup.requireText("replyTo.messageId", messageId);
            if (text.length() > MAX_TEXT) {
                text = text.substring(0, MAX_TEXT);
            }
        }
    }
}
