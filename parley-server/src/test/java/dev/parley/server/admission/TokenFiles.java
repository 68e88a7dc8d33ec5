package dev.parley.server.admission;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Looks for a secret in clear in every file under a data directory (the database, its WAL, key files). */
final class TokenFiles {
    private TokenFiles() {
    }

    static boolean nowhereIn(Path dataDir, String secret) {
        byte[] needle = secret.getBytes(StandardCharsets.UTF_8);
        try (Stream<Path> files = Files.walk(dataDir)) {
            return files.filter(Files::isRegularFile).noneMatch(f -> contains(read(f), needle));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            return new byte[0]; // a file that vanished (a rotated WAL) holds nothing to find
        }
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
