package dev.parley.core;

/**
 * Signs tickets and verifies them (the hub's signing keys live behind this port).
 * {@link #verify} refuses with {@link ErrorCode#INVALID_TICKET} anything it did not sign
 * for this hub and audience, and with {@link ErrorCode#EXPIRED_TICKET} what it signed
 * but has expired.
 */
public interface TicketIssuer {
    String issue(Ticket ticket);

    Ticket verify(String compact);

    /**
     * Makes a new signing key and retires the active one, which still verifies the tickets it
     * signed until they expire.
     */
    KeyRotation rotate();

    /** A rotation: the key retired by it and the key that signs from now on, by key id. */
    record KeyRotation(String retired, String active) {
    }
}
