package dev.parley.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One open Server-Sent Events response, parsed per the SSE format (field lines, a blank
 * line ends an event, {@code :} starts a comment).
 *
 * <p>A reader thread feeds a queue so that the follower waits with a deadline: a hub that
 * stays silent past its heartbeat (a half-open connection, a suspended laptop) counts as a
 * lost connection instead of blocking the follower forever.
 */
final class EventStream implements AutoCloseable {

    /** One dispatched event; {@code id} is the hub's cursor (the envelope's seq). */
    record Event(String id, String type, String data) {
    }

    /** Queue items besides events: proof of life, and the hub's end of the stream. */
    private static final Object COMMENT = new Object();
    private static final Object END = new Object();

    private final InputStream body;
    /** Lets go of the connection under {@code body}. */
    private final Runnable disconnect;
    private final BlockingQueue<Object> frames = new ArrayBlockingQueue<>(256);
    private final Thread reader;

    EventStream(InputStream body, Runnable disconnect) {
        this.body = body;
        this.disconnect = disconnect;
        this.reader = Thread.ofVirtual().name("parley-sse-reader").start(this::pump);
    }

    /**
     * The next event, or null when the hub ended the stream.
     *
     * @throws IOException the connection failed, or nothing (not even a heartbeat) arrived within {@code idle}
     */
    Event next(Duration idle) throws IOException, InterruptedException {
        while (true) {
            Object frame = frames.poll(idle.toMillis(), TimeUnit.MILLISECONDS);
            if (frame == null) {
                throw new IOException("nothing received for " + idle.toSeconds() + " s");
            }
            if (frame == END) {
                return null;
            }
            if (frame instanceof IOException failure) {
                throw new IOException(failure.getMessage(), failure);
            }
            if (frame instanceof Event event) {
                return event;
            }
        }
    }

    private void pump() {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
            String id = null;
            String type = null;
            StringBuilder data = null;
            for (String line; (line = lines.readLine()) != null; ) {
                if (line.isEmpty()) {
                    frames.put(data == null ? COMMENT : new Event(id, type, data.toString()));
                    id = null;
                    type = null;
                    data = null;
                } else if (line.startsWith(":")) {
                    frames.put(COMMENT);
                } else {
                    int colon = line.indexOf(':');
                    String field = colon < 0 ? line : line.substring(0, colon);
                    String value = colon < 0 ? "" : line.substring(colon + 1);
                    if (value.startsWith(" ")) {
                        value = value.substring(1);
                    }
                    switch (field) {
                        case "id" -> id = value;
                        case "event" -> type = value;
                        case "data" -> data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
                        default -> { } // "retry" and unknown fields: the follower has its own backoff
                    }
                }
            }
            frames.put(END);
        } catch (IOException e) {
            putQuietly(e);
        } catch (InterruptedException e) {
            // close(): nobody is listening any more
        }
    }

    private void putQuietly(IOException failure) {
        try {
            frames.put(failure);
        } catch (InterruptedException closed) {
            // close(): nobody is listening any more
        }
    }

    /** Abandons the connection: the reader stops and the hub sees the stream closed. */
    @Override
    public void close() {
        reader.interrupt(); // a virtual thread interrupted in a socket read has its socket closed
        disconnect.run();
    }
}
