package dev.parley.trace.files;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * An agent's working directory as the only place a file name from an agent or a message may
 * lead: one {@link #safeResolve check}, one {@link #read}, one {@link #write}, one limit
 * ({@link #MAX_BYTES}: reads are cut there and say so, larger writes are refused, never cut), one
 * error ({@link SandboxEscape}).
 *
 * <p>The escape rule. A name is relative, not empty and free of NUL; its {@code ..} are taken
 * lexically and may not climb above the root; what it names, with its symbolic links followed,
 * is inside the root (a link that stays inside is fine, one that leads out is not, be it the file
 * or a directory on the way; a link to nothing is refused).
 *
 * <p>Time of check and time of use. The check ({@link #safeResolve}) follows links by name, so
 * a link swapped in after it would be followed by any open by name. So no open is by name: the
 * checked path is the real one (it holds no link), and read and write walk it from the root's
 * open directory one component at a time with {@code openat(…, O_NOFOLLOW)}
 * ({@link SecureDirectoryStream}), the file too. A link put anywhere on that path after the
 * check makes that step fail, and the name is refused; nothing legitimate is, since the checked
 * path had no link to follow. A write makes the directories it needs under a fresh name in the
 * root and renames each into its opened parent ({@code renameat}), and writes the file under a
 * fresh name in its opened directory ({@code O_CREAT|O_EXCL|O_NOFOLLOW}), synced, then renamed
 * over the name: readers see the old file or the new one, never a part, and nothing is ever
 * created by a path walked after the check (a link swapped in for the file at the last moment is
 * itself replaced: rename does not follow it). Before opening the file, what it is is read from
 * its opened directory ({@code fstatat}, not following): a directory, a link or a device (a FIFO
 * would block the open) is refused there; a link swapped in after that still meets the
 * {@code O_NOFOLLOW} of the open. The root itself is the anchor: it and what is above it are the
 * hub's, not the agent's.
 */
public final class Sandbox {
    /** The one limit: most bytes a read returns (the rest is cut, and said to be) and a write takes. */
    public static final int MAX_BYTES = 1 << 20;
    private static final int MAX_NAME = 4096;
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

    private final Path root;
    private final Consumer<Path> betweenCheckAndOpen;

    /** A sandbox of {@code root}, an existing directory. */
    public Sandbox(Path root) {
        this(root, checked -> { });
    }

    /** With a hook called with the checked path before it is opened: where a test swaps a link in. */
    Sandbox(Path root, Consumer<Path> betweenCheckAndOpen) {
        try {
            this.root = root.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("the working directory cannot be opened", e);
        }
        if (!Files.isDirectory(this.root)) {
            throw new IllegalArgumentException("the working directory is not a directory");
        }
        this.betweenCheckAndOpen = betweenCheckAndOpen;
    }

    /** What a read found: at most {@link #MAX_BYTES} bytes, and whether the file had more. */
    public record Contents(byte[] bytes, boolean truncated) {
    }

    /**
     * The real path {@code relative} names inside the root (it need not exist yet); refused by
     * the escape rule. The path is the host's: for the hub's own use, never for a message.
     */
    public Path safeResolve(String relative) {
        Path wanted = root.resolve(name(relative));
        Path existing = wanted;
        while (!Files.exists(existing, NOFOLLOW)) {
            existing = existing.getParent(); // the root exists: the loop ends there at the latest
        }
        Path real;
        try {
            real = existing.toRealPath();
        } catch (NoSuchFileException e) {
            throw new SandboxEscape(quote(relative) + " leads through a symbolic link to nothing");
        } catch (IOException e) {
            throw new SandboxEscape(quote(relative) + " leads through symbolic links that cannot be followed");
        }
        Path resolved = real.resolve(existing.relativize(wanted));
        if (!resolved.startsWith(root)) {
            throw new SandboxEscape(quote(relative) + " leads out of the working directory through a symbolic link");
        }
        return resolved;
    }

    /** The file {@code relative} names: its first {@link #MAX_BYTES} bytes, cut there when it has more. */
    public Contents read(String relative) {
        Path inside = checked(relative);
        try (SecureDirectoryStream<Path> top = open(); Walk walk = walk(top, inside, relative, false)) {
            Path leaf = inside.getFileName();
            BasicFileAttributes found = attributes(walk.directory(), leaf)
                    .orElseThrow(() -> new SandboxEscape("no file " + quote(relative) + " in the working directory"));
            requireFile(found, relative, leaf);
            byte[] bytes;
            try (InputStream in = Channels.newInputStream(openFile(walk.directory(), leaf, relative,
                    Set.of(StandardOpenOption.READ)))) {
                bytes = in.readNBytes(MAX_BYTES + 1);
            }
            return bytes.length > MAX_BYTES ? new Contents(Arrays.copyOf(bytes, MAX_BYTES), true)
                    : new Contents(bytes, false);
        } catch (IOException e) {
            throw new UncheckedIOException(quote(relative) + " cannot be read", e);
        }
    }

    /**
     * Writes {@code bytes} as the file {@code relative} names, making the directories on the way
     * inside the root, replacing a file there at once (never a part written).
     */
    public void write(String relative, byte[] bytes) {
        if (bytes.length > MAX_BYTES) {
            throw new SandboxEscape(quote(relative) + ": at most " + MAX_BYTES + " bytes are written, not "
                    + bytes.length);
        }
        Path inside = checked(relative);
        try (SecureDirectoryStream<Path> top = open(); Walk walk = walk(top, inside, relative, true)) {
            Path leaf = inside.getFileName();
            attributes(walk.directory(), leaf).ifPresent(found -> requireFile(found, relative, leaf));
            Path fresh = fresh();
            try (SeekableByteChannel out = openFile(walk.directory(), fresh, relative, Set.of(StandardOpenOption.WRITE,
                    StandardOpenOption.CREATE_NEW))) {
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
                if (out instanceof FileChannel file) {
                    file.force(true);
                }
                walk.directory().move(fresh, walk.directory(), leaf);
            } catch (IOException | RuntimeException e) {
                deleteQuietly(walk.directory(), fresh);
                throw e;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(quote(relative) + " cannot be written", e);
        }
    }

    /** {@code relative}, checked, as a path from the root; the root itself is not a file. */
    private Path checked(String relative) {
        Path resolved = safeResolve(relative);
        betweenCheckAndOpen.accept(resolved);
        Path inside = root.relativize(resolved);
        if (inside.toString().isEmpty()) {
            throw new SandboxEscape(quote(relative) + " is the working directory itself, not a file");
        }
        return inside;
    }

    /** {@code relative} as a normal relative path that stays below the root by its {@code ..}. */
    private static Path name(String relative) {
        if (relative.isEmpty()) {
            throw new SandboxEscape("a file name is required, not an empty one");
        }
        if (relative.indexOf('\0') >= 0) {
            throw new SandboxEscape("a file name cannot hold a NUL byte: " + quote(relative.replace("\0", "\\0")));
        }
        if (relative.length() > MAX_NAME) {
            throw new SandboxEscape("a file name is at most " + MAX_NAME + " characters, not " + relative.length());
        }
        Path path = Path.of(relative);
        if (path.isAbsolute()) {
            throw new SandboxEscape("an absolute path is refused: name a file inside the working directory");
        }
        Path normal = path.normalize();
        if (normal.startsWith("..")) {
            throw new SandboxEscape(quote(relative) + " leads out of the working directory by ..");
        }
        return normal;
    }

    /** The root's directory, open: every walk starts here. */
    private SecureDirectoryStream<Path> open() throws IOException {
        DirectoryStream<Path> stream = Files.newDirectoryStream(root);
        if (stream instanceof SecureDirectoryStream<Path> secure) {
            return secure;
        }
        stream.close();
        throw new UnsupportedOperationException("this system cannot open files relative to a directory,"
                + " which confining them to it needs");
    }

    /** The open directory a walk reached; closed with the walk (the root's is closed by its opener). */
    private record Walk(SecureDirectoryStream<Path> directory, boolean own) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            if (own) {
                directory.close();
            }
        }
    }

    /**
     * Opens the directories of {@code inside} before its last name, one at a time without
     * following links, from {@code top}; makes those missing when {@code create}.
     */
    private Walk walk(SecureDirectoryStream<Path> top, Path inside, String relative, boolean create)
            throws IOException {
        Path parent = inside.getParent();
        if (parent == null) {
            return new Walk(top, false);
        }
        SecureDirectoryStream<Path> current = top;
        try {
            for (Path part : parent) {
                SecureDirectoryStream<Path> next;
                try {
                    next = current.newDirectoryStream(part, NOFOLLOW);
                } catch (NoSuchFileException missing) {
                    if (!create) {
                        throw new SandboxEscape("no file " + quote(relative) + " in the working directory");
                    }
                    makeDirectory(top, current, part);
                    next = enter(current, part, relative);
                } catch (FileSystemException e) {
                    throw refusal(current, part, relative, e);
                }
                if (current != top) {
                    current.close();
                }
                current = next;
            }
            return new Walk(current, current != top);
        } catch (IOException | RuntimeException e) {
            if (current != top) {
                current.close();
            }
            throw e;
        }
    }

    private static SecureDirectoryStream<Path> enter(SecureDirectoryStream<Path> directory, Path part,
                                                     String relative) throws IOException {
        try {
            return directory.newDirectoryStream(part, NOFOLLOW);
        } catch (FileSystemException e) {
            throw refusal(directory, part, relative, e);
        }
    }

    /**
     * Makes directory {@code part} in {@code parent}: made under a fresh name in the root (a
     * name nothing can have put a link at) and renamed into place relative to the open parent.
     */
    private void makeDirectory(SecureDirectoryStream<Path> top, SecureDirectoryStream<Path> parent, Path part)
            throws IOException {
        Path fresh = fresh();
        Files.createDirectory(root.resolve(fresh));
        try {
            top.move(fresh, parent, part);
        } catch (FileSystemException somethingThere) { // made meanwhile, or worse: the open that follows tells
            top.deleteDirectory(fresh);
        }
    }

    private static SeekableByteChannel openFile(SecureDirectoryStream<Path> directory, Path leaf, String relative,
                                                Set<StandardOpenOption> options) throws IOException {
        Set<java.nio.file.OpenOption> all = new java.util.HashSet<>(options);
        all.add(NOFOLLOW);
        try {
            return directory.newByteChannel(leaf, all);
        } catch (NoSuchFileException e) {
            throw new SandboxEscape("no file " + quote(relative) + " in the working directory");
        } catch (FileSystemException e) {
            throw refusal(directory, leaf, relative, e);
        }
    }

    /**
     * Why an open without following links failed: what {@link #refused} says of what is there;
     * the failure itself when a directory is there, or nothing.
     */
    private static RuntimeException refusal(SecureDirectoryStream<Path> directory, Path part, String relative,
                                            FileSystemException failed) throws IOException {
        Optional<BasicFileAttributes> found = attributes(directory, part);
        if (found.isEmpty() || found.get().isDirectory()) {
            return new UncheckedIOException(quote(relative) + " cannot be opened", failed);
        }
        return refused(found.get(), relative, part);
    }

    /** What {@code name} in {@code directory} is, the link itself if it is one; none if nothing is there. */
    private static Optional<BasicFileAttributes> attributes(SecureDirectoryStream<Path> directory, Path name)
            throws IOException {
        try {
            return Optional.of(directory.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW)
                    .readAttributes());
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    private static void requireFile(BasicFileAttributes found, String relative, Path leaf) {
        if (!found.isRegularFile()) {
            throw refused(found, relative, leaf);
        }
    }

    /** Why {@code found}, name {@code part} on the way of {@code relative}, is not what can be opened there. */
    private static SandboxEscape refused(BasicFileAttributes found, String relative, Path part) {
        if (found.isSymbolicLink()) {
            return new SandboxEscape(quote(relative) + " was changed into a symbolic link after it was checked;"
                    + " refused");
        }
        if (found.isDirectory()) {
            return new SandboxEscape(quote(relative) + " is a directory, not a file");
        }
        if (!found.isRegularFile()) {
            return new SandboxEscape(quote(relative) + " is not a regular file");
        }
        return new SandboxEscape(quote(relative) + ": " + quote(part.toString()) + " on the way is a file, not a"
                + " directory");
    }

    private static Path fresh() {
        return Path.of(".parley-" + UUID.randomUUID());
    }

    private static void deleteQuietly(SecureDirectoryStream<Path> directory, Path name) {
        try {
            directory.deleteFile(name);
        } catch (IOException ignored) {
            // not made, or already renamed into place: nothing is left over
        }
    }

    private static String quote(String relative) {
        return "'" + relative + "'";
    }
}
