package dev.parley.bench.http;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One line of an HTTP/1.1 head (a request or status line, or a header), taken out of a read
 * buffer up to its LF: how both the bench's client ({@link HttpConnection}) and its webhook
 * receiver read heads, each through a socket buffer of its own. Reused line after line.
 */
public final class HeadLine {
    private final int max;
    private byte[] bytes = new byte[256];
    private int length;
    private boolean complete = true;

    /** Lines longer than {@code max} bytes are refused. */
    public HeadLine(int max) {
        this.max = max;
    }

    /**
     * Takes the bytes of {@code buf[pos, lim)} into this line up to and including its LF, and
     * returns the position after what it took. When the line is not {@link #complete()} yet,
     * every byte was taken: the caller reads more and calls again.
     */
    public int take(byte[] buf, int pos, int lim) throws IOException {
        if (complete) {
            length = 0;
            complete = false;
        }
        while (pos < lim) {
            byte b = buf[pos++];
            if (b == '\n') {
                if (length > 0 && bytes[length - 1] == '\r') {
                    length--;
                }
                complete = true;
                return pos;
            }
            if (length == bytes.length) {
                if (length >= max) {
                    throw new IOException("head line longer than " + max + " bytes");
                }
                bytes = Arrays.copyOf(bytes, Math.min(max, length * 2));
            }
            bytes[length++] = b;
        }
        return pos;
    }

    /** Whether the line has reached its LF (a fresh line starts with the next {@link #take}). */
    public boolean complete() {
        return complete;
    }

    /** Its length without CR LF: 0 for the blank line that ends a head. */
    public int length() {
        return length;
    }

    public byte at(int i) {
        return bytes[i];
    }

    /** Whether it is the header {@code lowerName} (ASCII, any case). */
    public boolean headerIs(String lowerName) {
        int n = lowerName.length();
        if (length <= n || bytes[n] != ':') {
            return false;
        }
        for (int i = 0; i < n; i++) {
            int c = bytes[i];
            if (c >= 'A' && c <= 'Z') {
                c += 32;
            }
            if (c != lowerName.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** The value of a header line: what follows its first colon, trimmed. */
    public String headerValue() {
        int i = 0;
        while (i < length && bytes[i] != ':') {
            i++;
        }
        return new String(bytes, i + 1, Math.max(0, length - i - 1), StandardCharsets.ISO_8859_1).trim();
    }

    public String text() {
        return new String(bytes, 0, length, StandardCharsets.ISO_8859_1);
    }
}
