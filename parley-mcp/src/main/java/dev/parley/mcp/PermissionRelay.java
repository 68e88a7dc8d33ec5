package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Relays Claude Code's permission prompts through the hub. A
 * {@code notifications/claude/channel/permission_request} ({@code request_id},
 * {@code tool_name}, {@code description}, {@code input_preview}) becomes an envelope of kind
 * {@code permission_request} from this node to the approver (its parent, or the configured
 * node), sent like any other message, so the ACL and the audit log see it. The approver's
 * reply to that envelope — {@code allow} or {@code deny} as its text, or as
 * {@code data.behavior} — becomes {@code notifications/claude/channel/permission} with the
 * same {@code request_id} and {@code behavior}. Only a reply to a request this bridge sent,
 * from the approver, counts: the hub lets only the receiver of an envelope reply to it.
 */
public final class PermissionRelay {
    public static final String REQUEST_METHOD = "notifications/claude/channel/permission_request";
    public static final String VERDICT_METHOD = "notifications/claude/channel/permission";
    public static final String KIND = "permission_request";

    private static final Logger LOG = Logger.getLogger(PermissionRelay.class.getName());
    private static final int MAX_PENDING = 1_000;

    private final HubPort hub;
    private final String node;
    private final String approver;
    private final BiConsumer<String, Map<String, Object>> notify;
    /** Envelope id of a relayed request → Claude Code's request_id; oldest dropped past the bound. */
    private final Map<String, String> pending = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > MAX_PENDING;
        }
    };

    public PermissionRelay(HubPort hub, String node, String approver, BiConsumer<String, Map<String, Object>> notify) {
        this.hub = hub;
        this.node = node;
        this.approver = approver;
        this.notify = notify;
    }

    public String approver() {
        return approver;
    }

    /** Claude Code asks for a permission: send it to the approver. Never throws. */
    public void requested(JsonNode params) {
        String requestId = params == null ? "" : params.path("request_id").asText("");
        if (requestId.isEmpty()) {
            LOG.warning("ignored a permission_request without request_id: " + params);
            return;
        }
        String tool = params.path("tool_name").asText("a tool");
        String description = params.path("description").asText("");
        String preview = params.path("input_preview").asText("");
        ObjectNode body = McpJson.object();
        body.put("to", approver);
        body.put("kind", KIND);
        body.put("text", node + " asks permission to use " + tool + (description.isEmpty() ? "" : ": " + description)
                + (preview.isEmpty() ? "" : "\ninput: " + preview)
                + "\nReply to this message with allow or deny (request " + requestId + ").");
        ObjectNode data = body.putObject("data");
        data.put("request_id", requestId);
        data.put("tool_name", tool);
        data.put("description", description);
        data.put("input_preview", preview);
        data.put("node", node);
        try {
            String envelopeId = hub.send(body).path("id").asText();
            synchronized (pending) {
                pending.put(envelopeId, requestId);
            }
            LOG.info("relayed permission request " + requestId + " (" + tool + ") to " + approver + " as " + envelopeId);
        } catch (HubRefusal e) {
            LOG.log(Level.WARNING, "could not relay permission request " + requestId + " to " + approver + ": "
                    + e.code() + ": " + e.getMessage() + "; the local prompt still decides");
        }
    }

    /**
     * Whether {@code envelope} is the approver's verdict on a relayed request; if so the
     * verdict is sent to Claude Code and the reply acked, and the envelope is not pushed as a
     * channel message. A reply that is neither allow nor deny is left to be pushed as usual.
     */
    public boolean answered(JsonNode envelope) {
        if (!"reply".equals(envelope.path("kind").asText())) {
            return false;
        }
        String original = envelope.path("corrId").asText("");
        String requestId;
        synchronized (pending) {
            requestId = pending.get(original);
        }
        if (requestId == null || !approver.equals(envelope.path("from").asText())) {
            return false;
        }
        Optional<String> behavior = verdict(envelope);
        if (behavior.isEmpty()) {
            LOG.warning("the reply of " + approver + " to permission request " + requestId
                    + " is neither allow nor deny; it is shown to the session as a message");
            return false;
        }
        synchronized (pending) {
            pending.remove(original);
        }
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("request_id", requestId);
        params.put("behavior", behavior.get());
        notify.accept(VERDICT_METHOD, params);
        LOG.info("permission request " + requestId + ": " + behavior.get() + " by " + approver);
        try {
            ObjectNode ack = McpJson.object();
            ack.put("status", "processed");
            hub.ack(envelope.path("id").asText(), ack);
        } catch (HubRefusal e) {
            LOG.log(Level.FINE, "could not ack the verdict " + envelope.path("id").asText() + ": " + e.getMessage());
        }
        return true;
    }

    /** {@code allow} or {@code deny} from the reply's data.behavior, data (a string) or text. */
    static Optional<String> verdict(JsonNode envelope) {
        JsonNode data = envelope.path("data");
        for (JsonNode candidate : new JsonNode[]{data.path("behavior"), data, envelope.path("text")}) {
            if (candidate.isTextual()) {
                String word = candidate.textValue().strip().toLowerCase(Locale.ROOT).split("\\s+", 2)[0]
                        .replaceAll("[^a-z]", "");
                if (word.equals("allow") || word.equals("deny")) {
                    return Optional.of(word);
                }
            }
        }
        return Optional.empty();
    }
}
