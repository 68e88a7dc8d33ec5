package dev.parley.core;

/**
 * The federation's NATS authority as a gateway holding it uses it: it mints the credentials
 * (a user JWT and nkey seed, allowed only what {@code gateway} may do) that a new gateway
 * connects with.
 */
public interface GatewayMint {

    /** Refuses with {@link ErrorCode#INVALID_REQUEST} an id no gateway can have. */
    void requireValidId(String gateway);

    /** Fresh credentials for {@code gateway}, as the text of a {@code .creds} file. */
    Minted mint(String gateway);

    /** Minted credentials: the NATS user's public key (what a revocation names) and the {@code .creds} text. */
    record Minted(String userPublicKey, String creds) {
        /** Never prints the seed. */
        @Override
        public String toString() {
            return "Minted[user=" + userPublicKey + "]";
        }
    }
}
