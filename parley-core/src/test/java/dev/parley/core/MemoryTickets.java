package dev.parley.core;

import java.time.InstantSource;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Tickets kept by the issuer instead of signed, for unit tests (the JWT issuer is the
 * server's): a compact form is valid when this issuer handed it out, until it expires.
 */
final class MemoryTickets implements TicketIssuer {
    private final Map<String, Ticket> issued = new ConcurrentHashMap<>();
    private final AtomicInteger keys = new AtomicInteger(1);
    private final InstantSource clock;

    MemoryTickets(InstantSource clock) {
        this.clock = clock;
    }

    @Override
    public String issue(Ticket ticket) {
        String compact = "ticket." + ticket.jti();
        issued.put(compact, ticket);
        return compact;
    }

    @Override
    public Ticket verify(String compact) {
        Ticket ticket = issued.get(compact);
        if (ticket == null) {
            throw new ParleyException(ErrorCode.INVALID_TICKET, "the ticket is not valid");
        }
        if (!clock.instant().isBefore(ticket.expiresAt())) {
            throw new ParleyException(ErrorCode.EXPIRED_TICKET, "the ticket expired");
        }
        return ticket;
    }

    /** Key ids count up; a retired key's tickets stay valid, as they would until they expire. */
    @Override
    public KeyRotation rotate() {
        int retired = keys.getAndIncrement();
        return new KeyRotation("k-" + retired, "k-" + (retired + 1));
    }
}
