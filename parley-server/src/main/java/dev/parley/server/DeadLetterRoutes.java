package dev.parley.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.AuditEntry;
import dev.parley.core.DeliveryStore;
import dev.parley.core.ErrorCode;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.PolicyRules;
import dev.parley.core.Principal;

import java.time.InstantSource;
import java.util.Optional;

/** {@code /v1/dead-letters}: the operator's view of what could not be delivered, and what to do about it. */
final class DeadLetterRoutes {
    private final DeliveryStore store;
    private final InboxFeeds feeds;
    private final Dispatcher dispatcher;
    private final PolicyRules rules;
    private final InstantSource clock;

    DeadLetterRoutes(DeliveryStore store, InboxFeeds feeds, Dispatcher dispatcher, PolicyRules rules,
                     InstantSource clock) {
        this.store = store;
        this.feeds = feeds;
        this.dispatcher = dispatcher;
        this.rules = rules;
        this.clock = clock;
    }

    void register(Routes routes) {
        routes.get("/v1/dead-letters", this::list)
                .get("/v1/dead-letters/{mid}", this::show)
                .delete("/v1/dead-letters/{mid}", this::drop)
                .post("/v1/dead-letters/{mid}/redrive", this::redrive);
    }

    private void list(Exchange ex) {
        admin(ex);
        Optional<NodeId> node = ex.query("node").map(NodeId::of);
        int limit = (int) ex.longQuery("limit", 1, 1000, ErrorCode.INVALID_REQUEST).orElse(100);
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        store.deadLetters(node, limit).forEach(d -> items.add(view(d)));
        ex.json(200, out);
    }

    private void show(Exchange ex) {
        admin(ex);
        String id = ex.path("mid");
        ex.json(200, view(store.deadLetter(id).orElseThrow(() -> notFound(id))));
    }

    /** A fresh attempt cycle under the same envelope id: pushed again, or replayed to the next stream. */
    private void redrive(Exchange ex) {
        var caller = admin(ex);
        String id = ex.path("mid");
        var envelope = store.redrive(id, clock.instant(), audit(caller, "dead_letter.redrive", id));
        feeds.redeliver(envelope);
        dispatcher.wake();
        ObjectNode out = Json.object();
        out.put("id", id);
        out.put("state", "accepted");
        out.put("attempt", envelope.trace().attempt());
        ex.json(202, out);
    }

    private void drop(Exchange ex) {
        var caller = admin(ex);
        String id = ex.path("mid");
        store.drop(id, clock.instant(), audit(caller, "dead_letter.drop", id));
        ex.noContent();
    }

    private static ObjectNode view(DeliveryStore.DeadLetter deadLetter) {
        ObjectNode out = Json.object();
        out.put("id", deadLetter.envelope().id());
        out.put("node", deadLetter.envelope().to().value());
        out.put("reason", deadLetter.reason());
        out.put("attempts", deadLetter.attempts());
        out.put("at", Json.time(deadLetter.at()));
        out.set("envelope", Json.envelopeTree(deadLetter.envelope()));
        return out;
    }

    private AuditEntry audit(Principal caller, String action, String id) {
        return new AuditEntry(clock.instant(), caller.name(), action, id, AuditEntry.Decision.ALLOW, action,
                Optional.of(id), rules.version());
    }

    private static Principal admin(Exchange ex) {
        Principal caller = ex.caller();
        if (!(caller instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may manage dead letters");
        }
        return caller;
    }

    private static ParleyException notFound(String id) {
        return new ParleyException(ErrorCode.DEAD_LETTER_NOT_FOUND, "no dead letter " + id);
    }
}
