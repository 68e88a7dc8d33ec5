package dev.parley.server.http;

import java.io.OutputStream;
import java.nio.ByteBuffer;

/**
 * An answer's body written as it is produced (an SSE stream): blocking writes through the
 * {@link OutputStream}, and {@link #writeLater}, which a thread that must not block (the store's
 * announcer) uses to hand the connection a frame. The two never overlap: at most one write is
 * under way at a time, whichever kind.
 */
public abstract class StreamBody extends OutputStream {
    /** What follows a {@link #writeLater}: its bytes are out, or they never will be. */
    public interface Written {
        void written();

        void failed(Throwable cause);
    }

    /**
     * Starts writing {@code bytes} and returns without waiting for the client; {@code done}
     * follows, possibly on this thread before this returns, else on the server's own.
     */
    public abstract void writeLater(ByteBuffer bytes, Written done);

    /**
     * Gives up the answer without its end (a write never finished): the connection closes now,
     * and a write under way fails, whichever thread waits for it.
     */
    public abstract void abort();
}
