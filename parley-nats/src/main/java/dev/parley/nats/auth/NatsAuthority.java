package dev.parley.nats.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nats.client.Connection;
import io.nats.client.Message;
import io.nats.client.NKey;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.support.JsonSerializable;
import io.nats.client.support.JwtUtils;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The NATS trust Parley controls (decentralized auth, JWT v2): an operator, the system account
 * and the Parley account, whose signing key mints one user per gateway. nats-server trusts the
 * operator and preloads both accounts ({@link #serverConfig(Path)}), so users minted later need
 * no server reload; revoking one re-signs the account JWT and pushes it through the system
 * account ({@link #publishAccount(String)}), again without a reload.
 *
 * <p>jnats issues user JWTs; operator and account JWTs are encoded here from the claim format
 * of nats-io/jwt v2 (fields {@code type}, {@code version}, {@code system_account},
 * {@code limits}, {@code signing_keys}, {@code revocations}) and signed with jnats' ed25519
 * {@link JwtUtils#issueJWT}.
 *
 * <p>The seeds are the secret: {@link #export()} gives them as text for the caller to seal at
 * rest (a hub seals it with its {@code Sealer}); {@link #restore(String)} reads it back.
 */
public final class NatsAuthority {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();
    /** How long the throw-away system user that pushes an account update may connect. */
    private static final Duration PUSH_USER_VALIDITY = Duration.ofMinutes(2);

    private final NKey operator;
    private final NKey system;
    private final NKey account;
    private final NKey signing;
    /** User public key -> epoch second: that user's JWTs issued at or before it are refused. */
    private final Map<String, Long> revocations;

    private NatsAuthority(NKey operator, NKey system, NKey account, NKey signing, Map<String, Long> revocations) {
        this.operator = operator;
        this.system = system;
        this.account = account;
        this.signing = signing;
        this.revocations = Map.copyOf(revocations);
    }

    /** Fresh keys: a new operator, system account, Parley account and account signing key. */
    public static NatsAuthority create() {
        try {
            return new NatsAuthority(NKey.createOperator(RANDOM), NKey.createAccount(RANDOM), NKey.createAccount(RANDOM),
                    NKey.createAccount(RANDOM), Map.of());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot create ed25519 nkeys", e);
        }
    }

    public String accountPublicKey() {
        return publicKey(account);
    }

    public String systemAccountPublicKey() {
        return publicKey(system);
    }

    /** A gateway user allowed {@link GatewayPermissions}, issued now, with no expiry (revoke instead). */
    public GatewayCredentials mint(GatewayId gateway, StateRoomBuckets buckets) {
        return mint(gateway, buckets, Instant.now(), Duration.ZERO);
    }

    /** As {@link #mint(GatewayId, StateRoomBuckets)}, issued at {@code issuedAt}, expiring after {@code validity} (zero: never). */
    public GatewayCredentials mint(GatewayId gateway, StateRoomBuckets buckets, Instant issuedAt, Duration validity) {
        GatewayPermissions permissions = GatewayPermissions.of(gateway, buckets);
        JwtUtils.UserClaim claim = new JwtUtils.UserClaim(accountPublicKey())
                .pub(new JwtUtils.Permission().allow(permissions.publish().toArray(String[]::new)))
                .sub(new JwtUtils.Permission().allow(permissions.subscribe().toArray(String[]::new)))
                .allowedConnectionTypes("STANDARD")
                .tags("parley-gateway:" + gateway.value());
        NKey user = newUser();
        String userKey = publicKey(user);
        try {
            String jwt = JwtUtils.issueUserJWT(signing, userKey, "gateway " + gateway.value(), validity,
                    issuedAt.getEpochSecond(), claim);
            return new GatewayCredentials(gateway, userKey, jwt, new String(user.getSeed()));
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign a gateway user JWT", e);
        }
    }

    /** This authority with {@code userPublicKey}'s JWTs issued at or before {@code at} refused. */
    public NatsAuthority revoke(String userPublicKey, Instant at) {
        if (!isUserKey(userPublicKey)) {
            throw new IllegalArgumentException("not a NATS user public key: " + userPublicKey);
        }
        Map<String, Long> next = new TreeMap<>(revocations);
        next.merge(userPublicKey, at.getEpochSecond(), Math::max);
        return new NatsAuthority(operator, system, account, signing, next);
    }

    /** Whether {@code key} is a NATS user public key (jnats throws rather than answer false for a bad checksum). */
    public static boolean isUserKey(String key) {
        try {
            return NKey.isValidPublicUserKey(key.toCharArray());
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** The self-signed operator JWT, naming the system account. */
    public String operatorJwt() {
        Map<String, Object> nats = claimBase("operator");
        nats.put("system_account", systemAccountPublicKey());
        return sign(operator, publicKey(operator), "parley", nats);
    }

    /** The system account JWT (no JetStream), signed by the operator. */
    public String systemAccountJwt() {
        Map<String, Object> nats = claimBase("account");
        nats.put("limits", limits(false));
        return sign(operator, systemAccountPublicKey(), "SYS", nats);
    }

    /** The Parley account JWT: JetStream on, users signed by the signing key, the revocations. */
    public String accountJwt() {
        Map<String, Object> nats = claimBase("account");
        nats.put("limits", limits(true));
        nats.put("signing_keys", List.of(publicKey(signing)));
        if (!revocations.isEmpty()) {
            nats.put("revocations", revocations);
        }
        return sign(operator, accountPublicKey(), "PARLEY", nats);
    }

    /**
     * A complete nats-server configuration but for {@code listen} (and cluster routes): JetStream
     * storing under {@code storeDir}, the trusted operator, the system account and both accounts
     * preloaded in the MEMORY resolver.
     */
    public String serverConfig(Path storeDir) {
        return """
                jetstream {
                  store_dir: %s
                }
                # Decentralized auth: every client is a user JWT signed for an account this operator signed.
                operator: %s
                system_account: %s
                resolver: MEMORY
                resolver_preload: {
                  %s: %s
                  %s: %s
                }
                """.formatted(quoted(storeDir.toString()), operatorJwt(), systemAccountPublicKey(),
                systemAccountPublicKey(), systemAccountJwt(), accountPublicKey(), accountJwt());
    }

    /**
     * Pushes the current account JWT (e.g. after {@link #revoke}) to the nats-server at
     * {@code url} as a short-lived system-account user; connections of revoked users are closed.
     */
    public void publishAccount(String url) throws IOException, InterruptedException {
        String subject = "$SYS.REQ.ACCOUNT." + accountPublicKey() + ".CLAIMS.UPDATE";
        NKey user = newUser();
        JwtUtils.UserClaim claim = new JwtUtils.UserClaim(systemAccountPublicKey())
                .pub(new JwtUtils.Permission().allow(subject))
                .sub(new JwtUtils.Permission().allow("_INBOX.>"));
        String creds;
        try {
            creds = JwtUtils.NATS_USER_JWT_FORMAT.formatted(JwtUtils.issueUserJWT(system, publicKey(user), "parley account push",
                    PUSH_USER_VALIDITY, Instant.now().getEpochSecond(), claim), new String(user.getSeed()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign a system user JWT", e);
        }
        Options options = Options.builder().server(url).noReconnect()
                .authHandler(Nats.staticCredentials(creds.getBytes(StandardCharsets.UTF_8))).build();
        try (Connection connection = Nats.connect(options)) {
            Message reply = connection.request(subject, accountJwt().getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(10));
            if (reply == null) {
                throw new IOException("nats-server at " + url + " did not answer the account update");
            }
            JsonNode answer = JSON.readTree(reply.getData());
            if (answer.has("error")) {
                throw new IOException("nats-server refused the account update: " + answer.path("error").path("description").asText());
            }
        }
    }

    /** The seeds and revocations as JSON text: a secret, to be sealed at rest by the caller. */
    public String export() {
        Map<String, Object> secret = new LinkedHashMap<>();
        secret.put("operator", new String(operator.getSeed()));
        secret.put("system", new String(system.getSeed()));
        secret.put("account", new String(account.getSeed()));
        secret.put("signing", new String(signing.getSeed()));
        secret.put("revocations", new TreeMap<>(revocations));
        try {
            return JSON.writeValueAsString(secret);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads what {@link #export()} wrote; refuses text that is not an export. */
    public static NatsAuthority restore(String exported) {
        try {
            JsonNode node = JSON.readTree(exported);
            Map<String, Long> revoked = new TreeMap<>();
            node.path("revocations").properties().forEach(e -> revoked.put(e.getKey(), e.getValue().asLong()));
            return new NatsAuthority(seed(node, "operator", NKey.Type.OPERATOR), seed(node, "system", NKey.Type.ACCOUNT),
                    seed(node, "account", NKey.Type.ACCOUNT), seed(node, "signing", NKey.Type.ACCOUNT), revoked);
        } catch (IOException e) {
            throw new IllegalArgumentException("not an exported NATS authority: " + e.getMessage(), e);
        }
    }

    private static NKey seed(JsonNode node, String field, NKey.Type type) {
        String text = node.path(field).asText("");
        NKey key;
        try {
            key = NKey.fromSeed(text.toCharArray());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not an exported NATS authority: field " + field + " is not an nkey seed", e);
        }
        if (key.getType() != type) {
            throw new IllegalArgumentException("not an exported NATS authority: field " + field + " is not a " + type + " seed");
        }
        return key;
    }

    private static Map<String, Object> claimBase(String type) {
        Map<String, Object> nats = new LinkedHashMap<>();
        nats.put("type", type);
        nats.put("version", 2);
        return nats;
    }

    /** No limit on connections, subscriptions and data; JetStream storage unlimited when on (-1), off when absent. */
    private static Map<String, Object> limits(boolean jetStream) {
        Map<String, Object> limits = new LinkedHashMap<>();
        for (String unlimited : List.of("subs", "data", "payload", "imports", "exports", "conn", "leaf")) {
            limits.put(unlimited, -1);
        }
        limits.put("wildcards", true);
        if (jetStream) {
            for (String unlimited : List.of("mem_storage", "disk_storage", "streams", "consumer")) {
                limits.put(unlimited, -1);
            }
        }
        return limits;
    }

    private static String sign(NKey issuer, String subject, String name, Map<String, Object> nats) {
        try {
            String body = JSON.writeValueAsString(nats);
            JsonSerializable claim = () -> body;
            return JwtUtils.issueJWT(issuer, subject, name, Duration.ZERO, Instant.now().getEpochSecond(), publicKey(issuer), claim);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign a NATS JWT", e);
        }
    }

    private static NKey newUser() {
        try {
            return NKey.createUser(RANDOM);
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot create an ed25519 nkey", e);
        }
    }

    private static String publicKey(NKey key) {
        try {
            return new String(key.getPublicKey());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot derive an nkey's public key", e);
        }
    }

    private static String quoted(String text) {
        return '"' + text.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
