package dev.parley.core;

/** Source of new, unique, time-ordered identifiers for envelopes and grants. */
public interface IdGenerator {
    String next();
}
