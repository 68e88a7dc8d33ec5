package dev.parley.trace.files;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The escape rule, each part with real files and real symbolic links: a root ({@code work}) beside
 * a directory outside it ({@code outside}) holding a secret. A refusal says why in the user's
 * words and never names the host path of the root.
 */
class SandboxTest {
    @TempDir
    Path tmp;
    Path work;
    Path outside;

    @BeforeEach
    void files() throws IOException {
        work = Files.createDirectory(tmp.resolve("work"));
        outside = Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(outside.resolve("secret"), "the hub's secret");
        Files.createDirectories(work.resolve("src"));
        Files.writeString(work.resolve("src/notes.txt"), "inside");
    }

    @Test
    void aFileInsideIsReadAndWrittenAndALinkThatStaysInsideIsFollowed() throws IOException {
        Sandbox sandbox = new Sandbox(work);
        assertEquals("inside", text(sandbox.read("src/notes.txt")));
        assertEquals("inside", text(sandbox.read("./src/../src//notes.txt")), "lexical .. that stays inside");
        Files.createSymbolicLink(work.resolve("notes"), Path.of("src/notes.txt"));
        Files.createSymbolicLink(work.resolve("code"), work.resolve("src"));
        assertEquals("inside", text(sandbox.read("notes")));
        assertEquals("inside", text(sandbox.read("code/notes.txt")));
        assertEquals(work.toRealPath().resolve("src/notes.txt"), sandbox.safeResolve("code/notes.txt"));

        sandbox.write("out/deep/result.json", "{}".getBytes(StandardCharsets.UTF_8));
        assertEquals("{}", Files.readString(work.resolve("out/deep/result.json")));
        sandbox.write("notes", "replaced".getBytes(StandardCharsets.UTF_8));
        assertTrue(Files.isSymbolicLink(work.resolve("notes")), "a write through a link inside writes its file");
        assertEquals("replaced", Files.readString(work.resolve("src/notes.txt")));
        assertEquals(List.of("code", "notes", "out", "src"), names(work), "no temporary name is left over");
        assertEquals(List.of("notes.txt"), names(work.resolve("src")));
    }

    @Test
    void dotDotThatClimbsAboveTheRootIsRefused() {
        Sandbox sandbox = new Sandbox(work);
        for (String escape : List.of("../outside/secret", "src/../../outside/secret", "..", "src/../..")) {
            refused(() -> sandbox.read(escape), "'" + escape + "' leads out of the working directory by ..");
            refused(() -> sandbox.write(escape, new byte[1]), "leads out of the working directory by ..");
        }
        assertEquals(List.of("secret"), names(outside));
    }

    @Test
    void anAbsolutePathIsRefused() {
        Sandbox sandbox = new Sandbox(work);
        String secret = outside.resolve("secret").toString();
        refused(() -> sandbox.read(secret), "an absolute path is refused: name a file inside the working directory");
        refused(() -> sandbox.write(work.resolve("src/notes.txt").toString(), new byte[1]),
                "an absolute path is refused");
        refused(() -> sandbox.safeResolve("/etc/passwd"), "an absolute path is refused");
    }

    @Test
    void aLinkLeadingOutIsRefusedAsTheFileAndAsADirectoryOnTheWay() throws IOException {
        Files.createSymbolicLink(work.resolve("secret"), outside.resolve("secret"));
        Files.createSymbolicLink(work.resolve("src/up"), Path.of("../../outside"));
        Files.createSymbolicLink(work.resolve("nowhere"), outside.resolve("missing"));
        Sandbox sandbox = new Sandbox(work);
        refused(() -> sandbox.read("secret"), "'secret' leads out of the working directory through a symbolic link");
        refused(() -> sandbox.read("src/up/secret"), "leads out of the working directory through a symbolic link");
        refused(() -> sandbox.write("secret", "x".getBytes(StandardCharsets.UTF_8)), "through a symbolic link");
        refused(() -> sandbox.write("src/up/new/file", new byte[1]), "through a symbolic link");
        refused(() -> sandbox.write("nowhere", new byte[1]), "'nowhere' leads through a symbolic link to nothing");
        assertEquals("the hub's secret", Files.readString(outside.resolve("secret")));
        assertEquals(List.of("secret"), names(outside));
    }

    /**
     * Time of check, time of use: the hook runs after the check passed on a real directory and
     * file inside, and swaps in a link to the outside (the directory on the way, then the file
     * itself); the open that follows does not follow it, so the name is refused and nothing
     * outside is read or written.
     */
    @Test
    void aLinkSwappedInAfterTheCheckIsRefused() throws IOException {
        Files.writeString(outside.resolve("notes.txt"), "outside");
        Consumer<Path> directorySwap = checked -> swap(work.resolve("src"), outside);
        refused(() -> new Sandbox(work, directorySwap).read("src/notes.txt"),
                "'src/notes.txt' was changed into a symbolic link after it was checked; refused");
        restore(work.resolve("src"));
        refused(() -> new Sandbox(work, directorySwap).write("src/notes.txt", "x".getBytes(StandardCharsets.UTF_8)),
                "was changed into a symbolic link after it was checked");
        restore(work.resolve("src"));
        refused(() -> new Sandbox(work, directorySwap).write("src/new/file", new byte[1]),
                "was changed into a symbolic link after it was checked");
        restore(work.resolve("src"));

        Consumer<Path> fileSwap = checked -> swap(checked, outside.resolve("notes.txt"));
        refused(() -> new Sandbox(work, fileSwap).read("src/notes.txt"),
                "'src/notes.txt' was changed into a symbolic link after it was checked; refused");
        restore(work.resolve("src/notes.txt"));
        refused(() -> new Sandbox(work, fileSwap).write("src/notes.txt", "x".getBytes(StandardCharsets.UTF_8)),
                "was changed into a symbolic link after it was checked");

        assertEquals("outside", Files.readString(outside.resolve("notes.txt")));
        assertEquals(List.of("notes.txt", "secret"), names(outside), "nothing made outside");
    }

    @Test
    void namesThatAreNoNamesAreRefused() throws IOException {
        Sandbox sandbox = new Sandbox(work);
        refused(() -> sandbox.read(""), "a file name is required, not an empty one");
        refused(() -> sandbox.write("", new byte[1]), "a file name is required");
        refused(() -> sandbox.read("src/notes.txt\0.png"), "a file name cannot hold a NUL byte: 'src/notes.txt\\0.png'");
        refused(() -> sandbox.write("a\0b", new byte[1]), "cannot hold a NUL byte");
        refused(() -> sandbox.read("x".repeat(4097)), "a file name is at most 4096 characters, not 4097");
        refused(() -> sandbox.read("src"), "'src' is a directory, not a file");
        refused(() -> sandbox.write("src", new byte[1]), "'src' is a directory, not a file");
        refused(() -> sandbox.read("."), "'.' is the working directory itself, not a file");
        refused(() -> sandbox.read("src/missing"), "no file 'src/missing' in the working directory");
        refused(() -> sandbox.read("gone/missing"), "no file 'gone/missing' in the working directory");
        refused(() -> sandbox.read("src/notes.txt/x"), "'src/notes.txt/x': 'notes.txt' on the way is a file, not a"
                + " directory");
        refused(() -> sandbox.write("src/notes.txt/x", new byte[1]), "on the way is a file, not a directory");
        assertTrue(new ProcessBuilder("mkfifo", work.resolve("pipe").toString()).start().onExit().join()
                .exitValue() == 0, "mkfifo");
        refused(() -> sandbox.read("pipe"), "'pipe' is not a regular file");
        assertEquals("inside", Files.readString(work.resolve("src/notes.txt")), "no partial write anywhere");
    }

    @Test
    void aReadIsCutAtTheLimitAndSaysSoAndALargerWriteIsRefusedWhole() throws IOException {
        byte[] big = new byte[Sandbox.MAX_BYTES + 10];
        Arrays.fill(big, (byte) 'x');
        Files.write(work.resolve("big"), big);
        Files.write(work.resolve("exact"), Arrays.copyOf(big, Sandbox.MAX_BYTES));
        Sandbox sandbox = new Sandbox(work);
        Sandbox.Contents cut = sandbox.read("big");
        assertTrue(cut.truncated());
        assertArrayEquals(Arrays.copyOf(big, Sandbox.MAX_BYTES), cut.bytes());
        Sandbox.Contents whole = sandbox.read("exact");
        assertFalse(whole.truncated());
        assertEquals(Sandbox.MAX_BYTES, whole.bytes().length);

        refused(() -> sandbox.write("src/notes.txt", big), "'src/notes.txt': at most 1048576 bytes are written, not"
                + " 1048586");
        assertEquals("inside", Files.readString(work.resolve("src/notes.txt")));
        sandbox.write("src/notes.txt", Arrays.copyOf(big, Sandbox.MAX_BYTES));
        assertEquals(Sandbox.MAX_BYTES, Files.size(work.resolve("src/notes.txt")));
    }

    /** Refused with {@code why}, and the message never names where the root is on the host. */
    private void refused(Runnable action, String why) {
        SandboxEscape escape = assertThrows(SandboxEscape.class, action::run);
        assertTrue(escape.getMessage().contains(why), escape::getMessage);
        assertFalse(escape.getMessage().contains(tmp.toString()), escape::getMessage);
    }

    /** Replaces {@code path} (a directory or a file) by a link to {@code target}, keeping it at {@code path.real}. */
    private static void swap(Path path, Path target) {
        try {
            Files.move(path, path.resolveSibling(path.getFileName() + ".real"));
            Files.createSymbolicLink(path, target);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void restore(Path path) throws IOException {
        Files.delete(path);
        Files.move(path.resolveSibling(path.getFileName() + ".real"), path);
    }

    private static String text(Sandbox.Contents contents) {
        assertFalse(contents.truncated());
        return new String(contents.bytes(), StandardCharsets.UTF_8);
    }

    private static List<String> names(Path directory) {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
