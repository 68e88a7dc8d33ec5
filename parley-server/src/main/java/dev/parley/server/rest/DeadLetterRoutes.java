package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.DeadLetter;
import dev.parley.core.DeadLetters;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;

import java.util.Optional;

/** {@code /v1/dead-letters}: the operator's view of what could not be delivered, and what to do about it. */
public final class DeadLetterRoutes {
    private final DeadLetters deadLetters;

    public DeadLetterRoutes(DeadLetters deadLetters) {
        this.deadLetters = deadLetters;
    }

    public void register(Routes routes) {
        routes.get("/v1/dead-letters", this::list)
                .get("/v1/dead-letters/{mid}", this::show)
                .delete("/v1/dead-letters/{mid}", this::drop)
                .post("/v1/dead-letters/{mid}/redrive", this::redrive);
    }

    private void list(Exchange ex) {
        Optional<NodeId> node = ex.query("node").map(NodeId::of);
        int limit = (int) ex.longQuery("limit", 1, 1000, ErrorCode.INVALID_REQUEST).orElse(100);
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        deadLetters.list(ex.caller(), node, limit).forEach(d -> items.add(view(d)));
        ex.json(200, out);
    }

    private void show(Exchange ex) {
        ex.json(200, view(deadLetters.show(ex.caller(), ex.path("mid"))));
    }

    /** A fresh attempt cycle under the same envelope id: pushed again, or replayed to the next stream. */
    private void redrive(Exchange ex) {
        String id = ex.path("mid");
        Envelope envelope = deadLetters.redrive(ex.caller(), id);
        ObjectNode out = Json.object();
        out.put("id", id);
        out.put("state", "accepted");
        out.put("attempt", envelope.trace().attempt());
        ex.json(202, out);
    }

    private void drop(Exchange ex) {
        deadLetters.drop(ex.caller(), ex.path("mid"));
        ex.noContent();
    }

    private static ObjectNode view(DeadLetter deadLetter) {
        ObjectNode out = Json.object();
        out.put("id", deadLetter.envelope().id());
        out.put("node", deadLetter.envelope().to().value());
        out.put("reason", deadLetter.reason());
        out.put("attempts", deadLetter.attempts());
        out.put("at", Json.time(deadLetter.at()));
        out.set("envelope", Json.envelopeTree(deadLetter.envelope()));
        return out;
    }
}
