package dev.parley.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The Parley tools of the MCP surface — {@code send}, {@code reply}, {@code ack},
 * {@code inbox}, {@code peers}, {@code status} — for every transport: the stdio channel
 * bridge and the hub's {@code POST /mcp} both list {@link #SPECS} and call {@link #call}.
 * Arguments are checked here (the one validator, so both transports refuse the same input
 * with the same words); the hub decides everything else through the {@link HubPort}, so a
 * tool can do nothing the node's token could not do over REST.
 *
 * <p>A tool never throws: bad arguments and refusals come back as {@code isError} results
 * whose text says what was wrong and what to do.
 */
public final class ChannelTools {

    /** One tool as {@code tools/list} shows it. */
    public record Spec(String name, String description, ObjectNode inputSchema) {
    }

    /** The tool to name in {@code claude --permission-prompt-tool mcp__parley__permission_prompt}. */
    public static final String PERMISSION_PROMPT = "permission_prompt";
    public static final int DEFAULT_INBOX_LIMIT = 20;
    public static final int MAX_INBOX_LIMIT = 100;

    /** States in which an envelope needs nothing more from its receiver. */
    public static final Set<String> SETTLED = Set.of("processed", "replied", "failed", "dead_lettered");

    public static final List<Spec> SPECS = List.of(
            new Spec("send", "Send a message to another Parley node (see peers for whom you may reach). "
                    + "The hub checks the ACL; a refusal comes back as an error naming the reason.",
                    schema(new String[]{"to", "text"},
                            prop("to", "string", "Node id of the receiver, e.g. worker-1."),
                            prop("text", "string", "The message text."),
                            prop("data", null, "Optional JSON value sent along with the text."),
                            prop("thread_id", "string", "Optional thread id that groups a conversation."))),
            new Spec("reply", "Reply to a message you received, by its id. The reply goes to its sender with "
                    + "corr_id = that id, and settles the message (no ack needed after a reply).",
                    schema(new String[]{"id", "text"},
                            prop("id", "string", "The id of the message you answer (meta id of the channel message)."),
                            prop("text", "string", "The reply text."),
                            prop("data", null, "Optional JSON value sent along with the text."))),
            new Spec("ack", "Acknowledge a message you received once you have handled it: processed, or failed "
                    + "with a reason. Until then Parley keeps it open and pushes it again.",
                    enumStatus(schema(new String[]{"id", "status"},
                            prop("id", "string", "The id of the message (meta id of the channel message)."),
                            prop("status", "string", "processed or failed."),
                            prop("reason", "string", "Optional: why it failed.")))),
            new Spec("inbox", "List the messages in your inbox with their delivery state, oldest first, "
                    + "after a seq cursor. Use it to catch up on anything not yet acked.",
                    bounded(schema(new String[]{},
                            prop("after", "integer", "Only messages with a seq greater than this (default 0)."),
                            prop("limit", "integer", "How many at most, 1 to " + MAX_INBOX_LIMIT
                                    + " (default " + DEFAULT_INBOX_LIMIT + ").")))),
            new Spec("peers", "List the nodes you may send to, and why (same group, or a grant).",
                    schema(new String[]{})),
            new Spec("status", "Show the delivery state and timeline of a message you sent or received.",
                    schema(new String[]{"id"},
                            prop("id", "string", "The message id."))),
            new Spec(PERMISSION_PROMPT, "Claude Code's --permission-prompt-tool: asks the Parley hub whether this "
                    + "node may call a tool (its blocklist, the policy's permission rules, else its approver) and "
                    + "answers {\"behavior\":\"allow\",\"updatedInput\":…} or {\"behavior\":\"deny\",\"message\":…}.",
                    schema(new String[]{"tool_name", "input"},
                            prop("tool_name", "string", "The tool Claude Code wants to call."),
                            prop("input", "object", "The tool's input."),
                            prop("tool_use_id", "string", "The id of the tool use."))));

    private static final java.util.regex.Pattern TRACEPARENT =
            java.util.regex.Pattern.compile("^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$");

    private final HubPort hub;

    public ChannelTools(HubPort hub) {
        this.hub = hub;
    }

    public static Optional<Spec> spec(String name) {
        return SPECS.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /**
     * Runs one tool. {@code arguments} may be null or missing (no arguments); anything but an
     * object, an unknown tool, a missing or mistyped argument, and every hub refusal give an
     * {@code isError} result.
     */
    public ToolResult call(String name, JsonNode arguments) {
        return call(name, arguments, null);
    }

    /** Runs one tool under the caller's span when the call's {@code _meta} has a {@code traceparent}. */
    public ToolResult call(String name, JsonNode arguments, JsonNode meta) {
        String traceparent = meta == null ? "" : meta.path("traceparent").asText("");
        // a malformed one is ignored, as W3C says (and never reaches an HTTP header)
        return TRACEPARENT.matcher(traceparent).matches()
                ? new ChannelTools(hub.traced(traceparent)).run(name, arguments) : run(name, arguments);
    }

    private ToolResult run(String name, JsonNode arguments) {
        Optional<Spec> spec = spec(name);
        if (spec.isEmpty()) {
            return ToolResult.error("unknown tool '" + name + "'; the tools are send, reply, ack, inbox, peers, status, "
                    + PERMISSION_PROMPT);
        }
        try {
            Args args = Args.of(spec.get(), arguments);
            return switch (name) {
                case "send" -> send(args);
                case "reply" -> reply(args);
                case "ack" -> ack(args);
                case "inbox" -> inbox(args);
                case "peers" -> peers();
                case "status" -> status(args);
                case PERMISSION_PROMPT -> permissionPrompt(args);
                default -> throw new IllegalStateException("tool without implementation: " + name);
            };
        } catch (BadArguments e) {
            return ToolResult.error(name + ": " + e.getMessage());
        } catch (HubRefusal e) {
            return ToolResult.error(name + " refused by the hub: " + e.code() + ": " + e.getMessage());
        }
    }

    private ToolResult send(Args args) {
        String to = args.requiredString("to");
        ObjectNode body = McpJson.object();
        body.put("to", to);
        body.put("text", args.requiredString("text"));
        args.json("data").ifPresent(d -> body.set("data", d));
        args.string("thread_id").ifPresent(t -> body.put("threadId", t));
        JsonNode answer = hub.send(body);
        String id = answer.path("id").asText();
        return ToolResult.ok("Sent message " + id + " to " + to + " (seq " + answer.path("seq").asText()
                + ", accepted). A reply arrives as a channel message of kind reply with corr_id=" + id
                + "; status(id) shows its delivery state.", object(answer));
    }

    /**
     * The hub's decision in the shape Claude Code reads from a permission prompt tool: the JSON
     * as the result's text. A refusal by the hub is a denial, not a tool error: the prompt
     * must be answered.
     */
    private ToolResult permissionPrompt(Args args) {
        JsonNode input = args.json("input").filter(JsonNode::isObject)
                .orElseThrow(() -> new BadArguments("input must be the tool's input, an object"));
        ObjectNode request = McpJson.object();
        request.put("requestId", args.string("tool_use_id").orElseGet(() -> java.util.UUID.randomUUID().toString()));
        request.put("tool", args.requiredString("tool_name"));
        request.put("adapter", "claude-code");
        request.set("input", input);
        ObjectNode answer = McpJson.object();
        try {
            JsonNode decision = hub.permission(request);
            if ("allow".equals(decision.path("verdict").asText())) {
                answer.put("behavior", "allow");
                answer.set("updatedInput", input);
            } else {
                answer.put("behavior", "deny");
                answer.put("message", "denied by " + decision.path("decidedBy").asText() + ": "
                        + decision.path("reason").asText());
            }
        } catch (HubRefusal e) {
            answer.put("behavior", "deny");
            answer.put("message", "the Parley hub refused the request: " + e.code() + ": " + e.getMessage());
        }
        return ToolResult.ok(answer.toString(), null);
    }

    private ToolResult reply(Args args) {
        String id = args.requiredString("id");
        ObjectNode body = McpJson.object();
        body.put("text", args.requiredString("text"));
        args.json("data").ifPresent(d -> body.set("data", d));
        JsonNode answer = hub.reply(id, body);
        return ToolResult.ok("Replied to " + id + " with message " + answer.path("id").asText() + " to "
                + answer.path("to").asText() + "; " + id + " is settled.", object(answer));
    }

    private ToolResult ack(Args args) {
        String id = args.requiredString("id");
        String status = args.requiredString("status");
        if (!status.equals("processed") && !status.equals("failed")) {
            throw new BadArguments("'status' must be processed or failed, not '" + status + "'");
        }
        ObjectNode body = McpJson.object();
        body.put("status", status);
        args.string("reason").ifPresent(r -> body.put("reason", r));
        JsonNode answer = hub.ack(id, body);
        return ToolResult.ok("Acked " + id + ": its state is " + answer.path("state").asText() + ".", object(answer));
    }

    private ToolResult inbox(Args args) {
        long after = args.integer("after", 0, Long.MAX_VALUE).orElse(0L);
        int limit = (int) (long) args.integer("limit", 1, MAX_INBOX_LIMIT).orElse((long) DEFAULT_INBOX_LIMIT);
        JsonNode page = hub.inbox(after, limit);
        ObjectNode out = McpJson.object();
        ArrayNode items = out.putArray("items");
        StringBuilder text = new StringBuilder();
        int open = 0;
        for (JsonNode envelope : page.path("items")) {
            ObjectNode item = envelope.deepCopy();
            String state = stateOf(item.path("id").asText());
            item.put("state", state);
            items.add(item);
            if (!SETTLED.contains(state)) {
                open++;
            }
            text.append('[').append(item.path("seq").asText()).append("] ").append(item.path("id").asText())
                    .append(" from ").append(item.path("from").asText()).append(", ")
                    .append(item.path("kind").asText()).append(", ").append(state).append(": ")
                    .append(ChannelNotification.content(item)).append('\n');
        }
        out.set("next", page.path("next"));
        text.insert(0, items.isEmpty() ? "No messages after seq " + after + ".\n"
                : items.size() + " message(s), " + open + " not yet acked or replied:\n");
        text.append("next cursor: ").append(page.path("next").asText());
        return ToolResult.ok(text.toString(), out);
    }

    /** The state of one inbox item, or {@code unknown} when the hub cannot say (the page stays useful). */
    private String stateOf(String id) {
        try {
            return hub.message(id).path("state").asText("unknown");
        } catch (HubRefusal e) {
            return "unknown";
        }
    }

    private ToolResult peers() {
        JsonNode answer = hub.peers();
        StringBuilder text = new StringBuilder();
        for (JsonNode peer : answer.path("items")) {
            text.append("- ").append(peer.path("id").asText()).append(" (").append(peer.path("kind").asText())
                    .append("): ").append(peer.path("reason").asText()).append('\n');
        }
        String head = answer.path("items").isEmpty()
                ? "You (" + answer.path("node").asText() + ") may send to no other node yet."
                : "You (" + answer.path("node").asText() + ") may send to:";
        return ToolResult.ok(head + "\n" + text + "Replies to messages you receive need no permission.",
                object(answer));
    }

    private ToolResult status(Args args) {
        JsonNode answer = hub.message(args.requiredString("id"));
        StringBuilder text = new StringBuilder("Message " + answer.path("id").asText() + " from "
                + answer.path("from").asText() + " to " + answer.path("to").asText() + " (" + answer.path("kind").asText()
                + "): " + answer.path("state").asText() + "\n");
        for (JsonNode step : answer.path("timeline")) {
            text.append("- ").append(step.path("at").asText()).append(' ').append(step.path("state").asText());
            String detail = step.path("detail").asText("");
            if (!detail.isEmpty()) {
                text.append(": ").append(detail);
            }
            text.append('\n');
        }
        return ToolResult.ok(text.toString().stripTrailing(), object(answer));
    }

    private static ObjectNode object(JsonNode answer) {
        return answer instanceof ObjectNode o ? o : null;
    }

    // --- argument checking --------------------------------------------------------------

    /** A tool's arguments checked against its spec's property names and types. */
    private record Args(String tool, ObjectNode values) {
        static Args of(Spec spec, JsonNode arguments) {
            if (arguments == null || arguments.isNull() || arguments.isMissingNode()) {
                arguments = McpJson.object();
            }
            if (!(arguments instanceof ObjectNode object)) {
                throw new BadArguments("arguments must be a JSON object");
            }
            JsonNode properties = spec.inputSchema().path("properties");
            for (var entry : object.properties()) {
                if (!properties.has(entry.getKey())) {
                    List<String> known = new ArrayList<>();
                    properties.fieldNames().forEachRemaining(known::add);
                    throw new BadArguments("unknown argument '" + entry.getKey() + "'"
                            + (known.isEmpty() ? "; this tool takes none" : "; the arguments are " + String.join(", ", known)));
                }
            }
            for (JsonNode required : spec.inputSchema().path("required")) {
                JsonNode value = object.get(required.asText());
                if (value == null || value.isNull()) {
                    throw new BadArguments("missing required argument '" + required.asText() + "' ("
                            + properties.path(required.asText()).path("description").asText() + ")");
                }
            }
            return new Args(spec.name(), object);
        }

        String requiredString(String name) {
            return string(name).orElseThrow(() -> new BadArguments("missing required argument '" + name + "'"));
        }

        Optional<String> string(String name) {
            JsonNode value = values.get(name);
            if (value == null || value.isNull()) {
                return Optional.empty();
            }
            if (!value.isTextual()) {
                throw new BadArguments("argument '" + name + "' must be a string, not " + value.getNodeType().name()
                        .toLowerCase(java.util.Locale.ROOT));
            }
            return Optional.of(value.textValue());
        }

        Optional<Long> integer(String name, long min, long max) {
            JsonNode value = values.get(name);
            if (value == null || value.isNull()) {
                return Optional.empty();
            }
            if (!value.isIntegralNumber() || !value.canConvertToLong()) {
                throw new BadArguments("argument '" + name + "' must be an integer");
            }
            long n = value.longValue();
            if (n < min || n > max) {
                throw new BadArguments("argument '" + name + "' must be between " + min + " and " + max);
            }
            return Optional.of(n);
        }

        Optional<JsonNode> json(String name) {
            JsonNode value = values.get(name);
            return value == null || value.isNull() ? Optional.empty() : Optional.of(value);
        }
    }

    /** Arguments that do not fit the tool; the message is shown to the model. */
    private static final class BadArguments extends RuntimeException {
        BadArguments(String message) {
            super(message, null, false, false);
        }
    }

    // --- schemas ---------------------------------------------------------------------------

    private static ObjectNode prop(String name, String type, String description) {
        ObjectNode p = McpJson.object();
        p.put("name", name); // removed when the schema is assembled
        if (type != null) {
            p.put("type", type);
        }
        p.put("description", description);
        return p;
    }

    private static ObjectNode schema(String[] required, ObjectNode... properties) {
        ObjectNode schema = McpJson.object();
        schema.put("type", "object");
        ObjectNode props = schema.putObject("properties");
        for (ObjectNode p : properties) {
            String name = p.remove("name").asText();
            props.set(name, p);
        }
        ArrayNode req = schema.putArray("required");
        for (String r : required) {
            req.add(r);
        }
        schema.put("additionalProperties", false);
        return schema;
    }

    private static ObjectNode enumStatus(ObjectNode schema) {
        ((ObjectNode) schema.path("properties").path("status")).putArray("enum").add("processed").add("failed");
        return schema;
    }

    private static ObjectNode bounded(ObjectNode schema) {
        ((ObjectNode) schema.path("properties").path("after")).put("minimum", 0);
        ((ObjectNode) schema.path("properties").path("limit")).put("minimum", 1).put("maximum", MAX_INBOX_LIMIT);
        return schema;
    }

    /** The schema as a plain map, for libraries that take one. */
    public static Map<String, Object> schemaMap(Spec spec) {
        return McpJson.MAPPER.convertValue(spec.inputSchema(), new com.fasterxml.jackson.core.type.TypeReference<>() {
        });
    }
}
