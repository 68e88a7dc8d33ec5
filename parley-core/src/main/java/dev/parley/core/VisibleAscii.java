package dev.parley.core;

/**
 * Identifiers that clients choose (message ids, thread ids, skill refs, A2A ids): 1 to a bound of
 * visible ASCII characters, {@code !} to {@code ~}, so no space, control or non-ASCII character.
 * A loop rather than a regular expression: request paths check it on every send with a messageId.
 */
public final class VisibleAscii {
    private VisibleAscii() {
    }

    /** Whether {@code value} has 1 to {@code maxLength} characters, each visible ASCII. */
    public static boolean within(String value, int maxLength) {
        int length = value.length();
        if (length == 0 || length > maxLength) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c < '!' || c > '~') {
                return false;
            }
        }
        return true;
    }
}
