package dev.parley.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reasons of real failures on real files, in words and without the path repeated. */
class IoReasonTest {
    @TempDir
    Path dir;

    @Test
    void aMissingFileIsNotFound() {
        IOException e = assertThrows(IOException.class, () -> Files.readString(dir.resolve("absent.json")));
        assertEquals("file not found", IoReason.of(e));
    }

    @Test
    void aDirectoryReadAsAFileSaysSo() {
        IOException e = assertThrows(IOException.class, () -> Files.readString(dir));
        assertEquals("Is a directory", IoReason.of(e));
    }

    @Test
    void aPathThroughAFileIsNotADirectory() throws IOException {
        Path file = Files.writeString(dir.resolve("file"), "x");
        IOException e = assertThrows(IOException.class, () -> Files.readString(file.resolve("inside")));
        assertEquals("Not a directory", IoReason.of(e));
    }

    @Test
    void aFileWithoutReadPermissionIsDenied() throws IOException {
        Path file = Files.writeString(dir.resolve("secret"), "x");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("---------"));
        Assumptions.assumeFalse(Files.isReadable(file), "root reads any file: no denial to see");
        IOException e = assertThrows(IOException.class, () -> Files.readString(file));
        assertEquals("permission denied", IoReason.of(e));
    }

    @Test
    void aLinesStreamFailureSaysItsCause() throws IOException {
        try (BufferedReader reader = Files.newBufferedReader(Files.writeString(dir.resolve("f"), "a\nb\n"))) {
            reader.close();
            UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> reader.lines().toList());
            assertEquals("Stream closed", IoReason.of(e));
        }
    }
}
