package dev.parley.core;

/**
 * Keeps secrets that the hub must be able to use again (webhook signing secrets) unreadable
 * at rest. Tokens, which the hub only compares, are hashed instead.
 */
public interface Sealer {
    String seal(String secret);

    String open(String sealed);
}
