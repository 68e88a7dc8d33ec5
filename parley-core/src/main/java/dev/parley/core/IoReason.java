package dev.parley.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

/**
 * Why reading or writing a file failed, as the user reads it: the JDK's exceptions for a missing
 * file or a denied one carry only the path as their message ("cannot read a.json: a.json").
 */
public final class IoReason {
    private IoReason() {
    }

    /** "file not found", "permission denied", the file system's own reason, else the exception's message. */
    public static String of(IOException e) {
        return switch (e) {
            case AccessDeniedException denied -> "permission denied";
            case NoSuchFileException missing -> "file not found";
            case FileSystemException other when other.getReason() != null -> other.getReason();
            default -> e.getMessage() != null ? e.getMessage() : "an I/O error";
        };
    }

    /** {@link #of(IOException)} of the I/O failure {@code e} wraps. */
    public static String of(UncheckedIOException e) {
        return of(e.getCause());
    }
}
