package dev.parley.nats.auth;

import io.nats.client.AuthHandler;
import io.nats.client.Nats;
import io.nats.client.support.JwtUtils;

import java.nio.charset.StandardCharsets;

/**
 * A gateway's NATS user: its JWT (signed by the Parley account's signing key, carrying
 * {@link GatewayPermissions}) and its nkey seed. {@link #creds()} is the standard {@code .creds}
 * file that {@code Nats.credentials(path)} and the {@code nats} CLI read.
 */
public record GatewayCredentials(GatewayId gateway, String userPublicKey, String jwt, String seed) {

    public String creds() {
        return JwtUtils.NATS_USER_JWT_FORMAT.formatted(jwt, seed);
    }

    /** For {@code Options.Builder.authHandler}, without writing the creds to a file. */
    public AuthHandler authHandler() {
        return Nats.staticCredentials(creds().getBytes(StandardCharsets.UTF_8));
    }

    /** Never prints the seed. */
    @Override
    public String toString() {
        return "GatewayCredentials[gateway=" + gateway + ", user=" + userPublicKey + "]";
    }
}
