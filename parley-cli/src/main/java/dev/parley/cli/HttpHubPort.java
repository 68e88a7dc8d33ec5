package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.mcp.HubPort;
import dev.parley.mcp.HubRefusal;

/**
 * The hub port of the stdio channel bridge: the REST calls of the contract through the
 * CLI's {@link HubClient}, acting as the node whose token the client holds.
 */
final class HttpHubPort implements HubPort {
    private final HubClient client;

    HttpHubPort(HubClient client) {
        this.client = client;
    }

    @Override
    public HubPort traced(String traceparent) {
        return new HttpHubPort(client.traced(traceparent));
    }

    @Override
    public JsonNode node(String id) {
        return call(() -> client.get("/v1/nodes/" + HubClient.segment(id)));
    }

    @Override
    public JsonNode send(ObjectNode request) {
        return call(() -> client.post("/v1/messages", request));
    }

    @Override
    public JsonNode reply(String id, ObjectNode body) {
        return call(() -> client.post("/v1/messages/" + HubClient.segment(id) + "/reply", body));
    }

    @Override
    public JsonNode ack(String id, ObjectNode body) {
        return call(() -> client.post("/v1/messages/" + HubClient.segment(id) + "/ack", body));
    }

    @Override
    public JsonNode message(String id) {
        return call(() -> client.get("/v1/messages/" + HubClient.segment(id)));
    }

    @Override
    public JsonNode inbox(long after, int limit) {
        return call(() -> client.get("/v1/inbox?after=" + after + "&limit=" + limit));
    }

    @Override
    public JsonNode permission(ObjectNode request) {
        java.time.Duration hold = java.time.Duration.ofMillis(request.path("timeoutMs").asLong(
                java.time.Duration.ofMinutes(2).toMillis()));
        return call(() -> client.post("/v1/permissions", request, hold));
    }

    @Override
    public JsonNode peers() {
        return call(() -> client.get("/v1/peers"));
    }

    private interface Request {
        JsonNode run() throws InterruptedException;
    }

    private static JsonNode call(Request request) {
        try {
            return request.run();
        } catch (HubException e) {
            throw new HubRefusal(e.code(), e.getMessage(), status(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HubRefusal("interrupted", "the bridge is shutting down", 0);
        }
    }

    /** The HTTP status class a CLI failure stands for (0: no answer). */
    private static int status(HubException e) {
        return switch (e.exitStatus()) {
            case ExitStatus.UNAUTHORIZED -> 401;
            case ExitStatus.FORBIDDEN -> 403;
            case ExitStatus.NOT_FOUND -> 404;
            case ExitStatus.CONFLICT -> 409;
            case ExitStatus.HUB_FAILURE -> 500;
            case ExitStatus.UNREACHABLE -> 0;
            default -> 400;
        };
    }
}
