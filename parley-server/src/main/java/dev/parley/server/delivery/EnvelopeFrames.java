package dev.parley.server.delivery;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.parley.core.Envelope;
import dev.parley.server.wire.Json;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.List;

/**
 * The SSE frame of each envelope: {@code id: <seq>} (when it moves the reader's cursor),
 * {@code event: <kind>}, {@code data: <envelope JSON>}, a blank line. A batch is written by
 * one generator straight into one buffer: a replay writes hundreds of thousands of frames,
 * and a buffer and a generator per envelope were a third of its encoding time.
 */
final class EnvelopeFrames {
    /** A frame's lines and fields besides the envelope's text and data. */
    private static final int OVERHEAD = 512;

    private EnvelopeFrames() {
    }

    /** A buffer that holds the frames of {@code envelopes} without growing, after {@code lead} bytes. */
    static ByteArrayOutputStream buffer(Collection<Envelope> envelopes, int lead) {
        long size = lead;
        for (Envelope envelope : envelopes) {
            size += OVERHEAD + envelope.contentChars();
        }
        return new ByteArrayOutputStream((int) Math.min(size, Integer.MAX_VALUE - 8));
    }

    /** The frame of one envelope, naming its seq. */
    static byte[] frame(Envelope envelope) {
        List<Envelope> one = List.of(envelope);
        ByteArrayOutputStream frame = buffer(one, 0);
        write(frame, one, true);
        return frame.toByteArray();
    }

    /** Appends one frame per envelope to {@code frames}; with {@code ids}, each names its seq. */
    static void write(ByteArrayOutputStream frames, Collection<Envelope> envelopes, boolean ids) {
        try (JsonGenerator g = Json.generator(frames)) {
            for (Envelope envelope : envelopes) {
                if (ids) {
                    g.writeRaw("id: ");
                    g.writeRaw(Long.toString(envelope.seq()));
                    g.writeRaw('\n');
                }
                g.writeRaw("event: ");
                g.writeRaw(envelope.kind());
                g.writeRaw("\ndata: ");
                Json.envelope(g, envelope);
                g.writeRaw("\n\n");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte buffer does not fail
        }
    }
}
