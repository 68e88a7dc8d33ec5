package dev.parley.server.keys;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.NodeProof;
import dev.parley.core.ParleyException;
import dev.parley.core.Ticket;
import dev.parley.core.TicketIssuer;
import dev.parley.server.wire.Json;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Tickets as compact JWS (RFC 7515) JWTs signed with EdDSA (Ed25519, RFC 8037), built on
 * the JDK alone. Header {@code {"alg":"EdDSA","typ":"JWT","kid"}}; claims {@code iss} (hub
 * id), {@code sub} (node id), {@code aud} ("parley"), {@code jti}, {@code iat}, {@code exp},
 * {@code inviteId}, {@code sid} (session id) and, when the exchange proved one, {@code pk}
 * (the node's raw Ed25519 public key, base64url).
 *
 * <p>Verification is strict: exactly three canonical base64url parts, {@code alg} exactly
 * {@code EdDSA} (never {@code none} or an HMAC), a known {@code kid}, a valid signature,
 * {@code aud} "parley", {@code iss} this hub, {@code sub} a node id, {@code iat} not in the
 * future and {@code exp} not past, each with at most {@link #SKEW} of clock skew.
 */
public final class JwtTickets implements TicketIssuer {
    static final String AUDIENCE = "parley";
    public static final String ALGORITHM = "EdDSA";
    public static final Duration SKEW = Duration.ofSeconds(5);
    private static final int MAX_LENGTH = 4096;
    private static final int SIGNATURE_BYTES = 64;
    private static final Pattern PART = Pattern.compile("[A-Za-z0-9_-]+");
    private static final Base64.Encoder B64U = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64U_DECODER = Base64.getUrlDecoder();

    private final SigningKeys keys;
    private final InstantSource clock;

    public JwtTickets(SigningKeys keys, InstantSource clock) {
        this.keys = keys;
        this.clock = clock;
    }

    @Override
    public KeyRotation rotate() {
        return keys.rotate();
    }

    @Override
    public String issue(Ticket ticket) {
        ObjectNode claims = Json.object();
        claims.put("iss", keys.issuer());
        claims.put("sub", ticket.subject().value());
        claims.put("aud", AUDIENCE);
        claims.put("jti", ticket.jti());
        claims.put("iat", ticket.issuedAt().getEpochSecond());
        claims.put("exp", ticket.expiresAt().getEpochSecond());
        claims.put("inviteId", ticket.inviteId());
        claims.put("sid", ticket.sessionId());
        ticket.publicKey().ifPresent(pk -> claims.put("pk", pk));
        String kid = keys.active().kid();
        ObjectNode header = Json.object();
        header.put("alg", ALGORITHM);
        header.put("typ", "JWT");
        header.put("kid", kid);
        String signingInput = B64U.encodeToString(Json.bytes(header)) + "." + B64U.encodeToString(Json.bytes(claims));
        SigningKeys.Signed signed = keys.sign(signingInput.getBytes(StandardCharsets.US_ASCII));
        if (!signed.kid().equals(kid)) {
            return issue(ticket); // the key rotated between header and signature: sign again under the new one
        }
        return signingInput + "." + B64U.encodeToString(signed.signature());
    }

    @Override
    public Ticket verify(String compact) {
        if (compact == null || compact.isEmpty() || compact.length() > MAX_LENGTH) {
            throw invalid("the ticket is empty or too long");
        }
        String[] parts = compact.split("\\.", -1);
        if (parts.length != 3) {
            throw invalid("a ticket has exactly three dot-separated parts");
        }
        byte[] headerBytes = part(parts[0], "header");
        byte[] claimBytes = part(parts[1], "claims");
        byte[] signature = part(parts[2], "signature");
        JsonNode header = object(headerBytes, "header");
        JsonNode alg = header.get("alg");
        if (alg == null || !alg.isTextual() || !ALGORITHM.equals(alg.textValue())) {
            throw invalid("the ticket's alg must be EdDSA");
        }
        JsonNode typ = header.get("typ");
        if (typ != null && !(typ.isTextual() && "JWT".equals(typ.textValue()))) {
            throw invalid("the ticket's typ must be JWT");
        }
        if (header.has("crit")) {
            throw invalid("the ticket names critical extensions this hub does not know");
        }
        JsonNode kid = header.get("kid");
        if (kid == null || !kid.isTextual()) {
            throw invalid("the ticket has no kid");
        }
        SigningKeys.Key key = keys.verifier(kid.textValue()).orElseThrow(() -> invalid(
                "the ticket is signed with a key this hub does not know (or no longer accepts)"));
        if (signature.length != SIGNATURE_BYTES || !verifies(key, parts[0] + "." + parts[1], signature)) {
            throw invalid("the ticket's signature does not verify");
        }
        JsonNode claims = object(claimBytes, "claims");
        if (!AUDIENCE.equals(text(claims, "aud"))) {
            throw invalid("the ticket's audience is not " + AUDIENCE);
        }
        if (!keys.issuer().equals(text(claims, "iss"))) {
            throw invalid("the ticket was issued by another hub");
        }
        String subject = text(claims, "sub");
        NodeId node;
        try {
            node = NodeId.of(subject);
        } catch (ParleyException e) {
            throw invalid("the ticket's sub is not a node id");
        }
        String jti = text(claims, "jti");
        String inviteId = text(claims, "inviteId");
        String sessionId = text(claims, "sid");
        if (jti == null || jti.isEmpty() || inviteId == null || sessionId == null) {
            throw invalid("the ticket lacks jti, inviteId or sid");
        }
        Optional<String> publicKey = Optional.ofNullable(text(claims, "pk"));
        if (publicKey.isPresent() && !NodeProof.wellFormedKey(publicKey.get())) {
            throw invalid("the ticket's pk is not an Ed25519 public key");
        }
        Instant issuedAt = seconds(claims, "iat");
        Instant expiresAt = seconds(claims, "exp");
        Instant now = clock.instant();
        if (issuedAt.isAfter(now.plus(SKEW))) {
            throw invalid("the ticket is issued in the future");
        }
        if (!expiresAt.isAfter(issuedAt)) {
            throw invalid("the ticket expires before it is issued");
        }
        if (!now.isBefore(expiresAt.plus(SKEW))) {
            throw new ParleyException(ErrorCode.EXPIRED_TICKET, "the ticket expired at " + expiresAt);
        }
        return new Ticket(jti, node, inviteId, sessionId, publicKey, issuedAt, expiresAt);
    }

    private static boolean verifies(SigningKeys.Key key, String signingInput, byte[] signature) {
        try {
            Signature verifier = Signature.getInstance("Ed25519");
            verifier.initVerify(key.publicKey());
            verifier.update(signingInput.getBytes(StandardCharsets.US_ASCII));
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /** A canonical base64url part: the alphabet only, no padding, and it must re-encode to itself. */
    private static byte[] part(String encoded, String what) {
        if (!PART.matcher(encoded).matches()) {
            throw invalid("the ticket's " + what + " is not base64url");
        }
        try {
            byte[] bytes = B64U_DECODER.decode(encoded);
            if (!B64U.encodeToString(bytes).equals(encoded)) {
                throw invalid("the ticket's " + what + " is not canonical base64url");
            }
            return bytes;
        } catch (IllegalArgumentException e) {
            throw invalid("the ticket's " + what + " is not base64url");
        }
    }

    private static JsonNode object(byte[] bytes, String what) {
        try {
            JsonNode node = Json.MAPPER.readTree(bytes);
            if (node == null || !node.isObject()) {
                throw invalid("the ticket's " + what + " is not a JSON object");
            }
            return node;
        } catch (IOException e) {
            throw invalid("the ticket's " + what + " is not JSON");
        }
    }

    private static String text(JsonNode claims, String field) {
        JsonNode value = claims.get(field);
        return value != null && value.isTextual() ? value.textValue() : null;
    }

    private static Instant seconds(JsonNode claims, String field) {
        JsonNode value = claims.get(field);
        if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
            throw invalid("the ticket's " + field + " is not a NumericDate");
        }
        long seconds = value.longValue();
        if (seconds < 0 || seconds > Instant.MAX.getEpochSecond() / 2) {
            throw invalid("the ticket's " + field + " is out of range");
        }
        return Instant.ofEpochSecond(seconds);
    }

    private static ParleyException invalid(String message) {
        return new ParleyException(ErrorCode.INVALID_TICKET, message);
    }
}
