package dev.parley.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Samples the sizes of a hub's SQLite database and write-ahead log at a fixed period while
 * a load runs ({@code bench crash --wal-every}), printing each sample as progress.
 */
final class WalSampler implements AutoCloseable {
    /** One sample: seconds since the sampler started, WAL and database file sizes in bytes. */
    record Sample(double atSeconds, long walBytes, long dbBytes) {
    }

    private final Path db;
    private final Path wal;
    private final PrintWriter err;
    private final long start = System.nanoTime();
    private final List<Sample> samples = new ArrayList<>();
    private final Thread thread;

    WalSampler(Path dataDir, double periodSeconds, PrintWriter err) {
        this.db = dataDir.resolve("parley.db");
        this.wal = dataDir.resolve("parley.db-wal");
        this.err = err;
        long periodMillis = Math.round(periodSeconds * 1000);
        this.thread = Thread.ofPlatform().daemon().name("bench-wal-sampler").start(() -> {
            try {
                while (true) {
                    Thread.sleep(periodMillis);
                    sample();
                }
            } catch (InterruptedException e) {
                // closed
            }
        });
    }

    /** Takes a sample now (also used right before a kill), prints and keeps it. */
    Sample sample() {
        Sample s = new Sample((System.nanoTime() - start) / 1e9, size(wal), size(db));
        synchronized (samples) {
            samples.add(s);
        }
        BenchSupport.progress(err, String.format(Locale.ROOT, "at %.0f s: WAL %s, database %s", s.atSeconds(),
                megabytes(s.walBytes()), megabytes(s.dbBytes())));
        return s;
    }

    List<Sample> samples() {
        synchronized (samples) {
            return List.copyOf(samples);
        }
    }

    static String megabytes(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / 1e6);
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (NoSuchFileException e) {
            return 0; // no WAL right after a clean checkpoint, or before the first write
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    public void close() throws InterruptedException {
        thread.interrupt();
        thread.join(5_000);
    }
}
