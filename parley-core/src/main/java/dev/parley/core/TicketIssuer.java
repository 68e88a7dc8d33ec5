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
}
