package dev.parley.server.keys;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.NodeProof;
import dev.parley.core.TicketIssuer;
import dev.parley.core.UuidV7;
import dev.parley.server.wire.Json;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * The hub's Ed25519 signing keys for tickets, in {@code <data>/signing/} (directory 0700,
 * one file per key, mode 0600): {@code <kid>.json} holds {@code kid}, {@code createdAt},
 * {@code retiredAt} (null for the active key), {@code privateKey} (PKCS#8, base64url) and
 * {@code publicKey} (raw 32 bytes, base64url). The first start creates a key and the
 * hub's stable id in {@code <data>/hub.id}, the tickets' issuer.
 *
 * <p>{@link #rotate()} makes a new active key; the previous one stays valid for verifying
 * until every ticket it signed has expired ({@code retiredAt + ticketTtl + skew}), after
 * which it is forgotten and its file deleted.
 */
public final class SigningKeys {
    private static final Logger LOG = Logger.getLogger(SigningKeys.class.getName());
    static final String DIRECTORY = "signing";
    static final String HUB_ID_FILE = "hub.id";
    private static final Base64.Encoder B64U = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64U_DECODER = Base64.getUrlDecoder();

    /** One key: the active one has no {@code retiredAt}. */
    public record Key(String kid, Instant createdAt, Optional<Instant> retiredAt, PrivateKey privateKey, PublicKey publicKey) {
    }

    private final Path directory;
    private final String issuer;
    private final Duration retention;
    private final InstantSource clock;
    private volatile Key active;
    /** Retired keys still valid for verifying, newest first. */
    private volatile List<Key> retired;

    private SigningKeys(Path directory, String issuer, Duration retention, InstantSource clock, Key active,
                        List<Key> retired) {
        this.directory = directory;
        this.issuer = issuer;
        this.retention = retention;
        this.clock = clock;
        this.active = active;
        this.retired = retired;
    }

    /**
     * Loads the keys in {@code <dataDir>/signing/}, creating the first one (and the hub id)
     * when there is none. {@code retention} is how long a retired key still verifies.
     */
    public static SigningKeys open(Path dataDir, Duration retention, InstantSource clock) {
        Path directory = dataDir.resolve(DIRECTORY);
        try {
            Files.createDirectories(dataDir);
            if (!Files.isDirectory(directory)) {
                try {
                    Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rwx------")));
                } catch (FileAlreadyExistsException raced) {
                    // another start created it first
                }
            }
            String issuer = loadOrCreateHubId(dataDir);
            List<Key> keys = new ArrayList<>();
            try (Stream<Path> files = Files.list(directory)) {
                for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".json")).toList()) {
                    keys.add(read(file));
                }
            }
            keys.sort(Comparator.comparing(Key::createdAt).reversed());
            Instant now = clock.instant();
            Key active;
            List<Key> retired = new ArrayList<>();
            if (keys.stream().noneMatch(k -> k.retiredAt().isEmpty())) {
                active = generate(clock.instant());
                write(directory, active);
            } else {
                active = keys.stream().filter(k -> k.retiredAt().isEmpty()).findFirst().orElseThrow();
            }
            for (Key key : keys) {
                if (key == active) {
                    continue;
                }
                // A second unretired key (a crash mid-rotation) counts as retired when the newest was made.
                Key old = key.retiredAt().isPresent() ? key
                        : new Key(key.kid(), key.createdAt(), Optional.of(active.createdAt()), key.privateKey(), key.publicKey());
                if (old.retiredAt().get().plus(retention).isAfter(now)) {
                    retired.add(old);
                } else {
                    Files.deleteIfExists(directory.resolve(old.kid() + ".json"));
                }
            }
            return new SigningKeys(directory, issuer, retention, clock, active, List.copyOf(retired));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or create the signing keys in " + directory, e);
        }
    }

    /** The hub id, written as every ticket's {@code iss}. */
    public String issuer() {
        return issuer;
    }

    Key active() {
        return active;
    }

    /** A key that may verify a ticket now: the active key, or a retired one within its retention. */
    Optional<Key> verifier(String kid) {
        Key current = active;
        if (current.kid().equals(kid)) {
            return Optional.of(current);
        }
        Instant now = clock.instant();
        return retired.stream()
                .filter(k -> k.kid().equals(kid) && k.retiredAt().orElseThrow().plus(retention).isAfter(now))
                .findFirst();
    }

    /** All keys that verify now, active first: the hub's public key set. */
    public List<Key> verifiers() {
        Instant now = clock.instant();
        List<Key> out = new ArrayList<>();
        out.add(active);
        retired.stream().filter(k -> k.retiredAt().orElseThrow().plus(retention).isAfter(now)).forEach(out::add);
        return out;
    }

    /** Signs {@code input} with the active key: its kid and the raw 64-byte signature. */
    Signed sign(byte[] input) {
        Key key = active;
        try {
            Signature signer = Signature.getInstance("Ed25519");
            signer.initSign(key.privateKey());
            signer.update(input);
            return new Signed(key.kid(), signer.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 is required by every Java 15+ platform", e);
        }
    }

    record Signed(String kid, byte[] signature) {
    }

    /**
     * Makes a new active key and retires the current one, which keeps verifying for the
     * retention period. The new key is written before the old one is marked retired, so a
     * crash in between leaves two unretired keys, which {@link #open} resolves.
     */
    synchronized TicketIssuer.KeyRotation rotate() {
        Instant now = clock.instant();
        Key next = generate(now);
        Key previous = active;
        Key retiredNow = new Key(previous.kid(), previous.createdAt(), Optional.of(now), previous.privateKey(),
                previous.publicKey());
        try {
            write(directory, next);
            write(directory, retiredNow);
            List<Key> keep = new ArrayList<>();
            keep.add(retiredNow);
            for (Key key : retired) {
                if (key.retiredAt().orElseThrow().plus(retention).isAfter(now)) {
                    keep.add(key);
                } else {
                    Files.deleteIfExists(directory.resolve(key.kid() + ".json"));
                }
            }
            retired = List.copyOf(keep);
            active = next;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write a new signing key in " + directory, e);
        }
        LOG.info("signing key rotated: " + previous.kid() + " -> " + next.kid() + " (the old key verifies until "
                + now.plus(retention) + ")");
        return new TicketIssuer.KeyRotation(previous.kid(), next.kid());
    }

    private static Key generate(Instant now) {
        try {
            KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            String raw = NodeProof.encode(pair.getPublic());
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(B64U_DECODER.decode(raw));
            String kid = B64U.encodeToString(java.util.Arrays.copyOf(digest, 12));
            return new Key(kid, now, Optional.empty(), pair.getPrivate(), pair.getPublic());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 is required by every Java 15+ platform", e);
        }
    }

    private static Key read(Path file) throws IOException {
        try {
            JsonNode json = Json.MAPPER.readTree(Files.readString(file, StandardCharsets.UTF_8));
            JsonNode retiredAt = json.path("retiredAt");
            PrivateKey privateKey = KeyFactory.getInstance("Ed25519").generatePrivate(
                    new PKCS8EncodedKeySpec(B64U_DECODER.decode(json.path("privateKey").asText())));
            PublicKey publicKey = NodeProof.publicKey(json.path("publicKey").asText());
            return new Key(json.path("kid").asText(), Instant.parse(json.path("createdAt").asText()),
                    retiredAt.isTextual() ? Optional.of(Instant.parse(retiredAt.asText())) : Optional.empty(),
                    privateKey, publicKey);
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new IOException("signing key file " + file + " is not readable: " + e.getMessage(), e);
        }
    }

    /** Writes a key file with mode 0600 through a temporary file, so that a reader never sees half of it. */
    private static void write(Path directory, Key key) throws IOException {
        ObjectNode json = Json.object();
        json.put("kid", key.kid());
        json.put("alg", "EdDSA");
        json.put("crv", "Ed25519");
        json.put("createdAt", key.createdAt().toString());
        json.put("retiredAt", key.retiredAt().map(Instant::toString).orElse(null));
        json.put("privateKey", B64U.encodeToString(key.privateKey().getEncoded()));
        json.put("publicKey", NodeProof.encode(key.publicKey()));
        Path target = directory.resolve(key.kid() + ".json");
        Path temp = Files.createTempFile(directory, key.kid(), ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.write(temp, Json.bytes(json));
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    private static String loadOrCreateHubId(Path dataDir) throws IOException {
        Path file = dataDir.resolve(HUB_ID_FILE);
        if (!Files.exists(file)) {
            String id = "hub-" + new UuidV7(InstantSource.system()).next();
            try {
                Files.writeString(file, id + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE_NEW,
                        java.nio.file.StandardOpenOption.WRITE);
            } catch (FileAlreadyExistsException raced) {
                // another start created it first; read theirs
            }
        }
        return Files.readString(file, StandardCharsets.UTF_8).strip();
    }
}
