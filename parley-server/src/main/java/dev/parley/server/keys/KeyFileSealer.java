package dev.parley.server.keys;

import dev.parley.core.Sealer;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Seals secrets with AES-256-GCM under a key kept in {@code <data>/hub.key} (mode 0600,
 * created on first use). A copy of the database alone does not reveal webhook secrets.
 */
public final class KeyFileSealer implements Sealer {
    static final String KEY_FILE = "hub.key";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int NONCE_BYTES = 12;

    private final SecretKeySpec key;

    private KeyFileSealer(byte[] key) {
        this.key = new SecretKeySpec(key, "AES");
    }

    public static KeyFileSealer open(Path dataDir) {
        Path file = dataDir.resolve(KEY_FILE);
        try {
            if (!Files.exists(file)) {
                byte[] fresh = new byte[32];
                RANDOM.nextBytes(fresh);
                try {
                    Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                    Files.write(file, Base64.getEncoder().encode(fresh));
                } catch (FileAlreadyExistsException raced) {
                    // another start created it first; read theirs
                }
            }
            return new KeyFileSealer(Base64.getDecoder().decode(Files.readString(file, StandardCharsets.US_ASCII).strip()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or create the hub key at " + file, e);
        }
    }

    @Override
    public String seal(String secret) {
        try {
            byte[] nonce = new byte[NONCE_BYTES];
            RANDOM.nextBytes(nonce);
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, nonce));
            byte[] sealed = cipher.doFinal(secret.getBytes(StandardCharsets.UTF_8));
            return Base64.getEncoder().encodeToString(ByteBuffer.allocate(nonce.length + sealed.length)
                    .put(nonce).put(sealed).array());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is required by every Java platform", e);
        }
    }

    @Override
    public String open(String sealed) {
        try {
            byte[] bytes = Base64.getDecoder().decode(sealed);
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(128, bytes, 0, NONCE_BYTES));
            return new String(cipher.doFinal(bytes, NONCE_BYTES, bytes.length - NONCE_BYTES), StandardCharsets.UTF_8);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalStateException("a webhook secret cannot be opened: was " + KEY_FILE + " replaced?", e);
        }
    }
}
