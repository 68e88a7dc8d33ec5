package dev.parley.server.delivery;

import dev.parley.server.http.StreamBody;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/** A stream's body that keeps what is written to it, each write whole; a later write is out at once. */
final class RecordingBody extends StreamBody {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final Consumer<String> onWrite;

    RecordingBody() {
        this(write -> {
        });
    }

    /** {@code onWrite} sees each write's text as it is made. */
    RecordingBody(Consumer<String> onWrite) {
        this.onWrite = onWrite;
    }

    @Override
    public void write(int b) {
        throw new UnsupportedOperationException("frames are written whole");
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
        bytes.write(b, off, len);
        onWrite.accept(new String(b, off, len, StandardCharsets.UTF_8));
    }

    @Override
    public void writeLater(ByteBuffer frame, Written done) {
        byte[] copy = new byte[frame.remaining()];
        frame.get(copy);
        write(copy, 0, copy.length);
        done.written();
    }

    @Override
    public void abort() {
        throw new IllegalStateException("nothing is under way: every write is out at once");
    }

    synchronized String text() {
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
