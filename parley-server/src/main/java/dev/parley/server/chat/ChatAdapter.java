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
     * text where not): {@link Posted#TAKEN} once the platform took it, {@link Posted#REFUSED}
     * when it never will (the envelope fails), {@link Posted#LATER} to try again on a later pass.
     */
    Posted post(Chats.Outbound message);

    /** What became of a post. */
    enum Posted {
        TAKEN, REFUSED, LATER
    }

    /** Whether its own connection to the platform is up; empty for an adapter without one (a bridge's webhook). */
    default Optional<Boolean> connected() {
        return Optional.empty();
    }

    /** Closes its own connection, if it has one. */
    @Override
    default void close() {
    }
}
