package dev.parley.core;

/** Engage patterns: regular expressions an admin sets on a wiring, found in chat text. */
public interface EngagePatterns {
    /** Refuses ({@code invalid_request}, saying where) a pattern that is not a regular expression. */
    void requireValid(String pattern);

    /** Whether {@code pattern} is found anywhere in {@code text}. */
    boolean find(String pattern, String text);
}
