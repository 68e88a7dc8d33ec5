package dev.parley.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.text.ParseException;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * A JDK Flight Recorder recording of this JVM around one phase of a bench (the measured part
 * only, not the setup), with the JDK's {@code profile} settings. Used by the scenarios'
 * {@code --jfr FILE} option; read the file with {@code jfr view hot-methods FILE} or
 * {@code jfr print --events jdk.ExecutionSample FILE}. A hub in a child process is profiled
 * with {@code --hub-java-opt=-XX:StartFlightRecording:…} instead.
 */
final class BenchJfr implements AutoCloseable {
    private final Recording recording;
    private final Path file;
    private final PrintWriter err;

    private BenchJfr(Recording recording, Path file, PrintWriter err) {
        this.recording = recording;
        this.file = file;
        this.err = err;
    }

    /** Starts recording into {@code file}, or does nothing when {@code file} is null. */
    static BenchJfr start(Path file, PrintWriter err) throws IOException {
        if (file == null) {
            return new BenchJfr(null, null, err);
        }
        try {
            Recording r = new Recording(Configuration.getConfiguration("profile"));
            r.setName("parley-bench");
            r.start();
            return new BenchJfr(r, file, err);
        } catch (ParseException e) {
            throw new IOException("cannot read the JFR profile settings", e);
        }
    }

    /** Stops and writes the recording. */
    @Override
    public void close() throws IOException {
        if (recording == null) {
            return;
        }
        recording.stop();
        recording.dump(file);
        recording.close();
        BenchSupport.progress(err, "flight recording written to " + file.toAbsolutePath());
    }
}
