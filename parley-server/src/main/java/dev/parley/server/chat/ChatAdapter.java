package dev.parley.server.chat;

import dev.parley.core.Chats;

import java.util.Optional;

/**
 * One chat platform's edge: it hands what people say in to {@link Chats#inbound} and posts
 * what reaches their human nodes back into the room. It holds no policy.
 */
public interface ChatAdapter extends AutoCloseable {
    /** The platform id its messages carry. */
    String platform();

    /**
     * Posts {@code message} (a card's {@code card} as buttons where the platform has them, its
     * text where not); true once the platform took it. False leaves it for a later pass.
     */
    boolean post(Chats.Outbound message);

    /** Whether its own connection to the platform is up; empty for an adapter without one (a bridge's webhook). */
    default Optional<Boolean> connected() {
        return Optional.empty();
    }

    /** Closes its own connection, if it has one. */
    @Override
    default void close() {
    }
}
