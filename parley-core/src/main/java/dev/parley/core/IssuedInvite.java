package dev.parley.core;

/** An invite and its token, which is shown this once and stored only as a hash. */
public record IssuedInvite(Invite invite, String token) {
}
