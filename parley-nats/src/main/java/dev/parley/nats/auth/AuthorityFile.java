package dev.parley.nats.auth;

import dev.parley.core.ErrorCode;
import dev.parley.core.GatewayMint;
import dev.parley.core.ParleyException;
import dev.parley.core.Sealer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * The federation's {@link NatsAuthority} kept by the gateway that created it, in
 * {@code <data>/nats-authority} (mode 0600), sealed with the hub's key: a copy of that file
 * alone mints nothing. Written once, by {@code parley gateway init}; the hub reads it at start
 * and mints the credentials of gateways that join by invite.
 */
public final class AuthorityFile implements GatewayMint {
    static final String FILE = "nats-authority";

    private final NatsAuthority authority;

    private AuthorityFile(NatsAuthority authority) {
        this.authority = authority;
    }

    /** Writes {@code authority}, sealed, into {@code dataDir}; refuses to replace one already there. */
    public static void create(Path dataDir, Sealer sealer, NatsAuthority authority) {
        Path file = dataDir.resolve(FILE);
        try {
            Files.createDirectories(dataDir);
            Path partial = Files.createTempFile(dataDir, FILE, ".new",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                Files.writeString(partial, sealer.seal(authority.export()), StandardCharsets.US_ASCII);
                Files.createLink(file, partial); // fails, replacing nothing, when one exists
            } finally {
                Files.deleteIfExists(partial);
            }
        } catch (FileAlreadyExistsException e) {
            throw new IllegalStateException(dataDir + " already holds a NATS authority (" + file + "): a federation has"
                    + " one; mint with it (`parley gateway invite`) instead of making another", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the NATS authority to " + file, e);
        }
    }

    /**
     * Refuses, from now on, every JWT of the NATS user {@code userPublicKey} (a gateway's
     * credentials) issued until {@code at}: the authority in {@code dataDir} is replaced, sealed,
     * in one rename. Answers the authority as it now stands, whose account JWT carries the
     * revocation to nats-server ({@link NatsAuthority#publishAccount}, the configuration's preload).
     * Throws {@link IllegalArgumentException} for a key that is no NATS user key.
     */
    public static NatsAuthority revoke(Path dataDir, Sealer sealer, String userPublicKey, java.time.Instant at) {
        NatsAuthority revoked = open(dataDir, sealer).orElseThrow(() -> new IllegalStateException(dataDir
                + " holds no NATS authority: revoke on the gateway that ran `parley gateway init`")).authority
                .revoke(userPublicKey, at);
        Path file = dataDir.resolve(FILE);
        try {
            Path partial = Files.createTempFile(dataDir, FILE, ".new",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                Files.writeString(partial, sealer.seal(revoked.export()), StandardCharsets.US_ASCII);
                Files.move(partial, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(partial);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the NATS authority to " + file, e);
        }
        return revoked;
    }

    /** Whether {@code dataDir} holds an authority. */
    public static boolean exists(Path dataDir) {
        return Files.exists(dataDir.resolve(FILE));
    }

    /** The authority in {@code dataDir}, if this hub holds one. */
    public static Optional<AuthorityFile> open(Path dataDir, Sealer sealer) {
        Path file = dataDir.resolve(FILE);
        try {
            String sealed = Files.readString(file, StandardCharsets.US_ASCII).strip();
            return Optional.of(new AuthorityFile(NatsAuthority.restore(sealer.open(sealed))));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the NATS authority at " + file, e);
        }
    }

    @Override
    public void requireValidId(String gateway) {
        try {
            new GatewayId(gateway);
        } catch (IllegalArgumentException e) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, e.getMessage());
        }
    }

    @Override
    public Minted mint(String gateway) {
        GatewayCredentials credentials = authority.mint(new GatewayId(gateway), StateRoomBuckets.DEFAULT);
        return new Minted(credentials.userPublicKey(), credentials.creds());
    }
}
