package dev.parley.server.chat;

import dev.parley.core.Chats;

/**
 * One chat platform's edge: it hands what people say in to {@link Chats#inbound} and posts
 * what reaches their human nodes back into the room. It holds no policy.
 */
public interface ChatAdapter {
    /** The platform id its messages carry. */
    String platform();

    /**
     * Posts {@code message} (a card's {@code card} as buttons where the platform has them, its
     * text where not); true once the platform took it. False leaves it for a later pass.
     */
    boolean post(Chats.Outbound message);
}
