package dev.parley.core;

/** A minted ticket: its compact signed form and what it asserts. */
public record IssuedTicket(String compact, Ticket ticket) {
}
