package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.logging.Logger;

/**
 * Relays Claude Code's permission prompts through the hub. A
 * {@code notifications/claude/channel/permission_request} ({@code request_id},
 * {@code tool_name}, {@code description}, {@code input_preview}) becomes a
 * {@code POST /v1/permissions} ({@link HubPort#permission}): the hub decides — the node's
 * blocklist, the policy's permission rules, else the approver (its parent, or the configured
 * node) asked with a {@code permission_request} envelope — and its verdict becomes
 * {@code notifications/claude/channel/permission} with the same {@code request_id} and
 * {@code behavior}. A request the hub refuses or cannot be reached for is denied: no answer is
 * never a permission.
 */
public final class PermissionRelay {
    public static final String REQUEST_METHOD = "notifications/claude/channel/permission_request";
    public static final String VERDICT_METHOD = "notifications/claude/channel/permission";
    /** The envelope kind of the hub's question to an approver. */
    public static final String KIND = "permission_request";

    private static final Logger LOG = Logger.getLogger(PermissionRelay.class.getName());

    private final HubPort hub;
    private final String approver;
    private final BiConsumer<String, Map<String, Object>> notify;

    public PermissionRelay(HubPort hub, String approver, BiConsumer<String, Map<String, Object>> notify) {
        this.hub = hub;
        this.approver = approver;
        this.notify = notify;
    }

    public String approver() {
        return approver;
    }

    /** Claude Code asks for a permission: the hub decides on a thread of its own (it may wait minutes). Never throws. */
    public void requested(JsonNode params) {
        String requestId = params == null ? "" : params.path("request_id").asText("");
        if (requestId.isEmpty()) {
            LOG.warning("ignored a permission_request without request_id: " + params);
            return;
        }
        Thread.ofVirtual().name("parley-permission-" + requestId).start(() -> decide(requestId, params));
    }

    private void decide(String requestId, JsonNode params) {
        ObjectNode body = McpJson.object();
        body.put("requestId", requestId);
        body.put("tool", params.path("tool_name").asText(""));
        body.put("adapter", "claude-code");
        body.put("approver", approver);
        ObjectNode input = body.putObject("input");
        input.put("description", params.path("description").asText(""));
        input.put("input_preview", params.path("input_preview").asText(""));
        String behavior;
        try {
            JsonNode decision = hub.permission(body);
            behavior = decision.path("verdict").asText("deny");
            LOG.info("permission request " + requestId + ": " + behavior + " by " + decision.path("decidedBy").asText()
                    + " (" + decision.path("reason").asText() + ")");
        } catch (HubRefusal e) {
            behavior = "deny";
            LOG.warning("permission request " + requestId + " denied: the hub refused it: " + e.code() + ": "
                    + e.getMessage());
        }
        Map<String, Object> verdict = new LinkedHashMap<>();
        verdict.put("request_id", requestId);
        verdict.put("behavior", behavior);
        notify.accept(VERDICT_METHOD, verdict);
    }

    /**
     * Whether {@code envelope} is an approver's reply to a question the hub asked for this node:
     * the hub has read it as a verdict, so it is not pushed to the session as a message.
     */
    public boolean answered(JsonNode envelope) {
        if (!"reply".equals(envelope.path("kind").asText()) || envelope.path("corrId").asText("").isEmpty()) {
            return false;
        }
        try {
            if (!KIND.equals(hub.message(envelope.path("corrId").asText()).path("kind").asText())) {
                return false;
            }
            ObjectNode ack = McpJson.object();
            ack.put("status", "processed");
            hub.ack(envelope.path("id").asText(), ack);
            return true;
        } catch (HubRefusal e) {
            return false;
        }
    }
}
