package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ErrorCode;
import dev.parley.core.FederationStatus;
import dev.parley.core.GatewayInvites;
import dev.parley.core.ParleyException;
import dev.parley.core.Principal;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The federation of gateways: its view from this gateway ({@code GET /v1/gateways}, admin),
 * invites of new gateways ({@code POST /v1/gateways/invites}, admin of the gateway holding the
 * NATS authority) and their exchange for NATS credentials ({@code POST /v1/auth/gateway}, no
 * bearer: the invite is the credential, and the admission routes' per-address limit applies).
 */
public final class GatewayRoutes {
    private final Supplier<Optional<FederationStatus>> status;
    private final GatewayInvites invites;

    public GatewayRoutes(Supplier<Optional<FederationStatus>> status, GatewayInvites invites) {
        this.status = status;
        this.invites = invites;
    }

    public void register(Routes routes) {
        routes.get("/v1/gateways", this::gateways)
                .post("/v1/gateways/invites", this::invite)
                .post("/v1/auth/gateway", this::exchange);
    }

    /**
     * The admin's view of the federation from this gateway: its mode, spool and counters, and
     * every gateway seen in presence with its version, last beat, whether it counts as present,
     * and this gateway's ingest cursor on it. A single-host hub answers 404: it is no gateway.
     */
    private void gateways(Exchange ex) {
        if (!(ex.caller() instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "the federation's view is the admin's");
        }
        FederationStatus f = status.get().orElseThrow(() -> new ParleyException(ErrorCode.NOT_FOUND,
                "this hub is not a gateway: it runs without --gateway and --nats"));
        ObjectNode out = Json.object();
        out.put("gateway", f.gateway());
        out.put("mode", f.mode());
        out.put("spoolDepth", f.spoolDepth());
        out.put("refused", f.refused());
        out.put("unreadable", f.unreadable());
        out.put("stateSkipped", f.stateSkipped());
        var items = out.putArray("gateways");
        for (FederationStatus.Peer peer : f.peers()) {
            ObjectNode item = items.addObject();
            item.put("id", peer.gateway());
            item.put("self", peer.gateway().equals(f.gateway()));
            item.put("present", peer.present());
            item.put("lastSeen", Json.time(peer.lastSeen()));
            item.put("version", peer.version());
            Long cursor = f.cursors().get(peer.gateway());
            if (cursor == null) {
                item.putNull("cursor");
            } else {
                item.put("cursor", cursor);
            }
        }
        ex.json(200, out);
    }

    /** {@code {"gateway": "b", "ttlSeconds": 900}} → 201 {@code {"id","gateway","inviteToken","expiresAt"}}. */
    private void invite(Exchange ex) {
        Principal caller = ex.caller();
        Body body = ex.body();
        String gateway = body.requiredString("gateway");
        long ttl = body.longValue("ttlSeconds").orElse(GatewayInvites.DEFAULT_TTL.toSeconds());
        GatewayInvites.Issued issued = invites.issue(caller, gateway, Duration.ofSeconds(ttl));
        ObjectNode out = Json.object();
        out.put("id", issued.invite().id());
        out.put("gateway", issued.invite().gateway());
        out.put("inviteToken", issued.token());
        out.put("expiresAt", Json.time(issued.invite().expiresAt()));
        ex.json(201, out);
    }

    /** {@code {"inviteToken": "pg_…"}} → 200 {@code {"gateway","user","creds"}}: the {@code .creds} text, once. */
    private void exchange(Exchange ex) {
        GatewayInvites.Joined joined = invites.exchange(ex.body().requiredString("inviteToken"));
        ObjectNode out = Json.object();
        out.put("gateway", joined.gateway());
        out.put("user", joined.credentials().userPublicKey());
        out.put("creds", joined.credentials().creds());
        ex.json(200, out);
    }
}
