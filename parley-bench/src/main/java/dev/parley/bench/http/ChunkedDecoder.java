package dev.parley.bench.http;

import java.io.IOException;

/**
 * The chunked transfer coding of an HTTP/1.1 body, decoded as bytes arrive (push): the data of
 * each chunk goes to a {@link Sink}, framing and trailers are dropped. One decoder serves both
 * a response read whole ({@link HttpConnection}) and a stream read as it comes ({@link SseStream}).
 */
final class ChunkedDecoder {

    /** Receives decoded body bytes; they are valid only during the call. */
    interface Sink {
        void accept(byte[] b, int off, int len) throws IOException;
    }

    private enum State { SIZE, EXTENSION, DATA, DATA_END, TRAILER, TRAILER_LINE, DONE }

    private State state = State.SIZE;
    private long size;
    private boolean sizeDigits;
    private long left;

    /** Ready for the next body. */
    void reset() {
        state = State.SIZE;
        size = 0;
        sizeDigits = false;
        left = 0;
    }

    /** True once the last chunk and the trailers have been read. */
    boolean done() {
        return state == State.DONE;
    }

    /**
     * Decodes {@code len} bytes from {@code off}; returns how many it consumed, which is fewer
     * only when the body ends inside them (the rest belongs to what follows the body).
     */
    int feed(byte[] b, int off, int len, Sink sink) throws IOException {
        int i = off;
        int end = off + len;
        while (i < end && state != State.DONE) {
            switch (state) {
                case SIZE -> {
                    byte c = b[i++];
                    int digit = Character.digit(c, 16);
                    if (digit >= 0) {
                        if (size > (Long.MAX_VALUE >> 4)) {
                            throw new IOException("chunk size too large");
                        }
                        size = size * 16 + digit;
                        sizeDigits = true;
                    } else if (c == '\n') {
                        startChunk();
                    } else {
                        state = State.EXTENSION; // ';' extensions, or the CR of the size line
                    }
                }
                case EXTENSION -> {
                    if (b[i++] == '\n') {
                        startChunk();
                    }
                }
                case DATA -> {
                    int take = (int) Math.min(left, end - i);
                    sink.accept(b, i, take);
                    i += take;
                    left -= take;
                    if (left == 0) {
                        state = State.DATA_END;
                    }
                }
                case DATA_END -> { // the CR LF after a chunk's data
                    if (b[i++] == '\n') {
                        state = State.SIZE;
                    }
                }
                case TRAILER -> { // at the start of a trailer line; an empty one ends the body
                    byte c = b[i++];
                    if (c == '\n') {
                        state = State.DONE;
                    } else if (c != '\r') {
                        state = State.TRAILER_LINE;
                    }
                }
                case TRAILER_LINE -> {
                    if (b[i++] == '\n') {
                        state = State.TRAILER;
                    }
                }
                default -> throw new IllegalStateException(state.name());
            }
        }
        return i - off;
    }

    private void startChunk() throws IOException {
        if (!sizeDigits) {
            throw new IOException("chunk size line without a size");
        }
        left = size;
        size = 0;
        sizeDigits = false;
        state = left == 0 ? State.TRAILER : State.DATA;
    }
}
