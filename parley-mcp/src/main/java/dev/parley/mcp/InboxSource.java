package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.function.Consumer;

/**
 * A node's inbox as a live feed of envelopes (the hub's envelope JSON): the envelopes not
 * yet delivered, then each new one and each redelivery, surviving lost connections. The
 * stdio bridge reads it over {@code GET /v1/inbox/stream}; only envelopes the ACL admitted
 * are ever in an inbox, so nothing else can reach the session.
 */
public interface InboxSource {

    /** Feeds every envelope to {@code envelopes} until interrupted or closed. */
    void follow(Consumer<JsonNode> envelopes) throws InterruptedException;
}
