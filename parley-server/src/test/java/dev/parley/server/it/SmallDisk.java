package dev.parley.server.it;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A real, small filesystem for a test that fills a disk: a 16 MiB tmpfs mounted under a
 * temporary directory (mounting needs root; elsewhere the test is skipped with the reason),
 * filled on demand and unmounted on close.
 */
public final class SmallDisk implements AutoCloseable {
    private final Path mount;

    private SmallDisk(Path mount) {
        this.mount = mount;
    }

    /** Mounts the tmpfs at {@code dir/tmpfs}, or skips the calling test when it cannot. */
    public static SmallDisk mount(Path dir) throws IOException, InterruptedException {
        Path mountPoint = Files.createDirectories(dir.resolve("tmpfs"));
        String mounted = run("mount", "-t", "tmpfs", "-o", "size=16m", "parley-small-disk", mountPoint.toString());
        assumeTrue(mounted.isEmpty(), "skipped: a small tmpfs for the data directory needs root (mount said: "
                + mounted + ")");
        return new SmallDisk(mountPoint);
    }

    public Path resolve(String name) {
        return mount.resolve(name);
    }

    /** Writes a file until the filesystem has no space left; delete it to free the space. */
    public Path fill() throws IOException {
        Path file = mount.resolve("filler");
        byte[] chunk = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) {
                out.write(chunk);
            }
        } catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left")) {
                throw e;
            }
        }
        return file;
    }

    /** Unmounts; close what holds files on it (the hub) first. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (!run("umount", mount.toString()).isEmpty()) {
            run("umount", "--lazy", mount.toString()); // a file still open (a failed run): detach it anyway
        }
    }

    /** Runs a command; returns its output when it failed, "" when it succeeded. */
    private static String run(String... command) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return e.getMessage();
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return command[0] + " did not finish";
        }
        return p.exitValue() == 0 ? "" : output.isEmpty() ? command[0] + " exited " + p.exitValue() : output;
    }
}
