package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Admission;
import dev.parley.core.CreatedNode;
import dev.parley.core.ExchangeRequest;
import dev.parley.core.Invite;
import dev.parley.core.IssuedInvite;
import dev.parley.core.IssuedTicket;
import dev.parley.core.NewInvite;
import dev.parley.core.NodeId;
import dev.parley.core.NodeKind;
import dev.parley.core.NodeProof;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.core.Registry;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.keys.JwtTickets;
import dev.parley.server.keys.SigningKeys;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

import java.time.Duration;
import java.util.Optional;

/**
 * Admission by invite: {@code POST /v1/invites} (admin, or a node for a child of itself),
 * {@code POST /v1/auth/exchange} and {@code POST /v1/auth/redeem} (no bearer), and the
 * hub's ticket keys ({@code GET /v1/auth/keys}, {@code POST /v1/auth/keys/rotate} for the admin).
 */
public final class AdmissionRoutes {
    private final Admission admission;
    private final Registry registry;
    private final SigningKeys keys;
    private final Metrics metrics;

    public AdmissionRoutes(Admission admission, Registry registry, SigningKeys keys, Metrics metrics) {
        this.admission = admission;
        this.registry = registry;
        this.keys = keys;
        this.metrics = metrics;
    }

    public void register(Routes routes) {
        routes.post("/v1/invites", this::invite)
                .post("/v1/auth/exchange", this::exchange)
                .post("/v1/auth/redeem", this::redeem)
                .get("/v1/auth/keys", this::keys)
                .post("/v1/auth/keys/rotate", this::rotateKey);
    }

    private void invite(Exchange ex) {
        Principal caller = ex.caller();
        Body body = ex.body();
        Optional<NodeId> nodeId = body.nodeId("nodeId");
        NodeKind kind = body.string("kind").map(NodeKind::parse).orElse(NodeKind.EXTERNAL);
        Optional<NodeId> parent = body.nodeId("parent");
        var labels = body.stringMap("labels");
        long ttl = body.longValue("ttlSeconds").orElse(NewInvite.DEFAULT_TTL.toSeconds());
        if (ttl < NewInvite.MIN_TTL.toSeconds() || ttl > NewInvite.MAX_TTL.toSeconds()) {
            throw Body.invalid("ttlSeconds must be between " + NewInvite.MIN_TTL.toSeconds() + " and "
                    + NewInvite.MAX_TTL.toSeconds());
        }
        IssuedInvite issued = admission.invite(caller, new NewInvite(nodeId, kind, parent, labels, Duration.ofSeconds(ttl)));
        Invite invite = issued.invite();
        ObjectNode out = Json.object();
        out.put("id", invite.id());
        out.put("inviteToken", issued.token());
        out.put("expiresAt", Json.time(invite.expiresAt()));
        out.put("nodeId", invite.nodeId().map(NodeId::value).orElse(null));
        out.put("kind", invite.kind().wire());
        out.put("parent", invite.parent().map(NodeId::value).orElse(null));
        ex.json(201, out);
    }

    /**
     * Shape errors (a missing or ill-typed field: 400 {@code invalid_request}; a node id off
     * its pattern: 400 {@code invalid_node_id}) come before the checks of the exchange.
     */
    private void exchange(Exchange ex) {
        try {
            Body body = ex.body();
            String token = body.requiredString("inviteToken");
            String nodeId = body.requiredString("nodeId");
            String nonce = body.token("nonce").orElseThrow(() -> Body.invalid("field 'nonce' is required"));
            Optional<String> publicKey = body.string("publicKey");
            Optional<String> proof = body.string("proof");
            IssuedTicket issued = admission.exchange(new ExchangeRequest(token, NodeId.of(nodeId), nonce, publicKey,
                    proof));
            metrics.exchange("issued");
            ObjectNode out = Json.object();
            out.put("ticket", issued.compact());
            out.put("expiresAt", Json.time(issued.ticket().expiresAt()));
            out.put("sessionId", issued.ticket().sessionId());
            ex.json(200, out);
        } catch (ParleyException e) {
            metrics.exchange(e.code().wire());
            throw e;
        }
    }

    private void redeem(Exchange ex) {
        try {
            Body body = ex.body();
            String ticket = body.requiredString("ticket");
            CreatedNode created = admission.redeem(ticket);
            metrics.redeem("created");
            ObjectNode out = Views.node(created.node(), registry.children(created.node().id()),
                    registry.group(created.node()), registry.gateway(created.node().id()));
            out.remove("children");
            out.put("token", created.token());
            ex.json(201, out);
        } catch (ParleyException e) {
            metrics.redeem(e.code().wire());
            throw e;
        }
    }

    /** The public keys that verify tickets now, as a JWK set (RFC 7517, OKP/Ed25519), with the issuer. */
    private void keys(Exchange ex) {
        ObjectNode out = Json.object();
        out.put("issuer", keys.issuer());
        var list = out.putArray("keys");
        for (SigningKeys.Key key : keys.verifiers()) {
            ObjectNode jwk = list.addObject();
            jwk.put("kty", "OKP");
            jwk.put("crv", "Ed25519");
            jwk.put("alg", JwtTickets.ALGORITHM);
            jwk.put("use", "sig");
            jwk.put("kid", key.kid());
            jwk.put("x", NodeProof.encode(key.publicKey()));
            jwk.put("createdAt", Json.time(key.createdAt()));
            jwk.put("retiredAt", key.retiredAt().map(Json::time).orElse(null));
        }
        ex.json(200, out);
    }

    private void rotateKey(Exchange ex) {
        ObjectNode out = Json.object();
        out.put("kid", admission.rotateKeys(ex.caller()));
        ex.json(200, out);
    }
}
