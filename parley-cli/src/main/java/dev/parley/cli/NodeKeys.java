package dev.parley.cli;

import dev.parley.core.IoReason;
import dev.parley.core.NodeProof;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;

/**
 * A node's Ed25519 key pair on disk, and the proofs the hub asks it for ({@link NodeProof}):
 * {@code parley join} creates it, {@code parley token rotate} signs with it.
 *
 * <p>One directory per node (default {@code ~/.parley/keys/<id>/}, mode 0700) holding
 * {@value #PRIVATE_FILE}, the private key as PKCS#8 PEM, and {@value #PUBLIC_FILE}, the raw
 * 32-byte public key in base64url (the form the hub and a JWK use), both mode 0600.
 */
final class NodeKeys {
    static final String PRIVATE_FILE = "node.key";
    static final String PUBLIC_FILE = "node.pub";

    private static final String ALGORITHM = "Ed25519";
    private static final String PEM_BEGIN = "-----BEGIN PRIVATE KEY-----";
    private static final String PEM_END = "-----END PRIVATE KEY-----";
    private static final Base64.Encoder B64U = Base64.getUrlEncoder().withoutPadding();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path dir;
    private final PrivateKey privateKey;
    private final String publicKey;

    private NodeKeys(Path dir, PrivateKey privateKey, String publicKey) {
        this.dir = dir;
        this.privateKey = privateKey;
        this.publicKey = publicKey;
    }

    /** Where a node's key lives unless {@code --key-dir} says otherwise. A valid node id is a safe file name. */
    static Path defaultDir(String nodeId) {
        return Path.of(System.getProperty("user.home"), ".parley", "keys", nodeId);
    }

    /** Whether {@code dir} holds a key (its private half). */
    static boolean exists(Path dir) {
        return Files.exists(dir.resolve(PRIVATE_FILE));
    }

    /**
     * Generates a key pair and stores it in {@code dir}, created if needed. Never overwrites:
     * a file already there is an error, so a key that admitted a node is not lost.
     */
    static NodeKeys generate(Path dir) {
        if (Files.exists(dir.resolve(PUBLIC_FILE))) { // a half pair: checked before anything is written
            throw failure("will not overwrite " + dir.resolve(PUBLIC_FILE)
                    + "; move it away or choose another --key-dir", null);
        }
        KeyPair pair;
        try {
            pair = KeyPairGenerator.getInstance(ALGORITHM).generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw failure("this Java runtime cannot generate Ed25519 keys", e);
        }
        String publicKey = NodeProof.encode(pair.getPublic());
        try {
            Files.createDirectories(dir.toAbsolutePath().getParent());
            if (!Files.isDirectory(dir)) {
                Files.createDirectory(dir, permissions(dir, "rwx------"));
            }
            restrict(dir, "rwx------");
            write(dir.resolve(PRIVATE_FILE), pem(pair.getPrivate().getEncoded()));
            write(dir.resolve(PUBLIC_FILE), publicKey + "\n");
        } catch (FileAlreadyExistsException e) {
            throw failure("will not overwrite " + e.getFile() + "; move it away or choose another --key-dir", e);
        } catch (IOException e) {
            throw failure("cannot store the node key in " + dir + ": " + e.getMessage(), e);
        }
        return new NodeKeys(dir, pair.getPrivate(), publicKey);
    }

    /** Reads the key pair in {@code dir}, checking that its two halves belong together. */
    static NodeKeys load(Path dir) {
        PrivateKey privateKey;
        String publicKey;
        try {
            String pem = Files.readString(dir.resolve(PRIVATE_FILE), StandardCharsets.UTF_8);
            byte[] der = Base64.getMimeDecoder().decode(pem.replace(PEM_BEGIN, "").replace(PEM_END, "").strip());
            privateKey = KeyFactory.getInstance(ALGORITHM).generatePrivate(new PKCS8EncodedKeySpec(der));
            publicKey = Files.readString(dir.resolve(PUBLIC_FILE), StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw failure("cannot read the node key in " + dir + ": " + IoReason.of(e), e);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw failure(dir.resolve(PRIVATE_FILE) + " is not a PKCS#8 Ed25519 private key", e);
        }
        NodeKeys keys = new NodeKeys(dir, privateKey, publicKey);
        String probe = "parley-key-check|" + nonce();
        if (!NodeProof.valid(publicKey, probe, keys.sign(probe))) {
            throw failure(dir.resolve(PUBLIC_FILE) + " is not the public half of " + dir.resolve(PRIVATE_FILE), null);
        }
        return keys;
    }

    /** A fresh single-use nonce: 128 random bits in base64url. */
    static String nonce() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return B64U.encodeToString(bytes);
    }

    Path dir() {
        return dir;
    }

    /** The raw public key in base64url, as {@code publicKey} of an exchange. */
    String publicKey() {
        return publicKey;
    }

    /** The raw 64-byte Ed25519 signature of {@code message} (UTF-8), in base64url: a proof. */
    String sign(String message) {
        try {
            Signature signer = Signature.getInstance(ALGORITHM);
            signer.initSign(privateKey);
            signer.update(message.getBytes(StandardCharsets.UTF_8));
            return B64U.encodeToString(signer.sign());
        } catch (GeneralSecurityException e) {
            throw failure("cannot sign with the node key in " + dir + ": " + e.getMessage(), e);
        }
    }

    private static String pem(byte[] der) {
        return PEM_BEGIN + "\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n" + PEM_END + "\n";
    }

    /** Creates {@code file} with mode 0600 (failing if it exists) and only then writes the secret into it. */
    private static void write(Path file, String content) throws IOException {
        Files.createFile(file, permissions(file, "rw-------"));
        restrict(file, "rw-------");
        Files.writeString(file, content, StandardCharsets.UTF_8);
    }

    private static boolean posix(Path path) {
        return path.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    private static FileAttribute<?>[] permissions(Path path, String mode) {
        return posix(path) ? new FileAttribute<?>[]{PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString(mode))} : new FileAttribute<?>[0];
    }

    /** Sets the mode exactly, whatever the umask left. */
    private static void restrict(Path path, String mode) throws IOException {
        if (posix(path)) {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
        }
    }

    private static HubException failure(String message, Throwable cause) {
        return HubException.local("node_key", message, cause);
    }
}
