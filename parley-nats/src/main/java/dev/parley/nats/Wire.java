package dev.parley.nats;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.DeliveryState;
import dev.parley.core.Envelope;
import dev.parley.core.Grant;
import dev.parley.core.GrantTarget;
import dev.parley.core.JsonText;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.NodeKind;
import dev.parley.core.RemoteStep;
import dev.parley.core.SendRequest;
import dev.parley.core.Subscription;
import dev.parley.core.TopicName;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.core.TraceContext;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What gateways write to NATS, as JSON: outbox records (an envelope, or a step of one) and
 * state room entries (a node with its owner, a grant, a presence beat). Reading throws
 * {@link Unreadable} for anything that is not a complete record, never a library exception.
 */
final class Wire {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A peer's data read as a send's is: one value, no key twice in an object. */
    private static final ObjectReader ONE_VALUE = JSON.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS,
            DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

    private Wire() {
    }

    /** A record that does not parse. */
    static final class Unreadable extends Exception {
        Unreadable(String message) {
            super(message);
        }
    }

    /** One outbox record. */
    sealed interface Record {
        record Mail(Envelope envelope) implements Record {
        }

        /** Steps of envelopes sent from the receiving gateway, several in one record. */
        record Steps(List<RemoteStep> steps) implements Record {
        }
    }

    /**
     * A node as its owner put it in the state room: {@code deletedAt} once its owner deleted it,
     * and the gateways that take it over, in order, when its owner is gone.
     */
    record NodeEntry(Node node, String owner, Optional<Instant> deletedAt, List<String> fallbacks) {
        NodeEntry {
            fallbacks = List.copyOf(fallbacks);
        }
    }

    static byte[] mail(Envelope e) {
        ObjectNode out = JSON.createObjectNode();
        out.put("type", "envelope");
        out.put("id", e.id());
        out.put("from", e.from().value());
        out.put("to", e.to().value());
        out.put("kind", e.kind());
        e.text().ifPresent(t -> out.put("text", t));
        e.data().ifPresent(d -> out.put("data", d.json()));
        e.corrId().ifPresent(c -> out.put("corrId", c));
        e.threadId().ifPresent(t -> out.put("threadId", t));
        e.topic().ifPresent(t -> out.put("topic", t));
        ObjectNode meta = out.putObject("meta");
        e.meta().forEach(meta::put);
        out.put("createdAt", e.createdAt().toEpochMilli());
        out.put("attempt", e.trace().attempt());
        out.put("route", e.trace().route().wire());
        out.put("policyVersion", e.trace().policyVersion());
        e.trace().rule().ifPresent(r -> out.put("rule", r));
        out.put("traceContext", e.trace().context().stored());
        return bytes(out);
    }

    static byte[] steps(List<RemoteStep> steps) {
        ObjectNode out = JSON.createObjectNode();
        out.put("type", "steps");
        var items = out.putArray("steps");
        for (RemoteStep step : steps) {
            ObjectNode item = items.addObject();
            item.put("ref", step.ref());
            item.put("state", step.state().wire());
            item.put("at", step.at().toEpochMilli());
            item.put("detail", step.detail());
        }
        return bytes(out);
    }

    /**
     * The NATS header naming a record's span (W3C), for tools that read the stream; the body's
     * {@code traceContext} is what gateways read, the header stands in for it when a record has none.
     */
    static final String TRACEPARENT = "traceparent";

    static Record record(byte[] data, Optional<String> traceparent) throws Unreadable {
        JsonNode in = tree(data);
        try {
            return switch (text(in, "type")) {
                case "envelope" -> new Record.Mail(new Envelope(text(in, "id"), 0, NodeId.of(text(in, "from")),
                        NodeId.of(text(in, "to")), SendRequest.requireKind(text(in, "kind")), optional(in, "text"),
                        data(in), optional(in, "corrId"), optional(in, "threadId"),
                        optional(in, "topic"), Optional.empty(), stringMap(in.get("meta")),
                        Instant.ofEpochMilli(number(in, "createdAt")),
                        new Trace((int) number(in, "attempt"), Route.parse(text(in, "route")),
                                text(in, "policyVersion"), optional(in, "rule"), optional(in, "traceContext")
                                .map(stored -> TraceContext.fromStored(stored, text(in, "id")))
                                .or(() -> traceparent.flatMap(TraceContext::parse))
                                .orElseGet(() -> TraceContext.derived(text(in, "id"))))));
                // a record of one step, as gateways wrote them before steps were gathered
                case "step" -> new Record.Steps(List.of(step(in)));
                case "steps" -> {
                    JsonNode items = in.get("steps");
                    if (items == null || !items.isArray() || items.isEmpty()) {
                        throw new Unreadable("a steps record without steps");
                    }
                    List<RemoteStep> steps = new ArrayList<>(items.size());
                    for (JsonNode item : items) {
                        steps.add(step(item));
                    }
                    yield new Record.Steps(List.copyOf(steps));
                }
                default -> throw new Unreadable("unknown record type " + text(in, "type"));
            };
        } catch (RuntimeException e) {
            throw new Unreadable("not a valid outbox record: " + e.getMessage());
        }
    }

    private static RemoteStep step(JsonNode in) {
        return new RemoteStep(text(in, "ref"), DeliveryState.parse(text(in, "state")),
                Instant.ofEpochMilli(number(in, "at")), text(in, "detail"));
    }

    static byte[] node(Node node, String owner) {
        return node(new NodeEntry(node, owner, Optional.empty(), List.of()));
    }

    static byte[] node(NodeEntry entry) {
        Node node = entry.node();
        ObjectNode out = JSON.createObjectNode();
        out.put("id", node.id().value());
        out.put("kind", node.kind().wire());
        node.parent().ifPresent(p -> out.put("parent", p.value()));
        ObjectNode labels = out.putObject("labels");
        node.labels().forEach(labels::put);
        out.put("depth", node.depth());
        out.put("createdAt", node.createdAt().toEpochMilli());
        out.put("owner", entry.owner());
        entry.deletedAt().ifPresent(at -> out.put("deletedAt", at.toEpochMilli()));
        if (!entry.fallbacks().isEmpty()) {
            var fallbacks = out.putArray("fallbacks");
            entry.fallbacks().forEach(fallbacks::add);
        }
        return bytes(out);
    }

    static NodeEntry node(byte[] data) throws Unreadable {
        JsonNode in = tree(data);
        try {
            return new NodeEntry(new Node(NodeId.of(text(in, "id")), NodeKind.parse(text(in, "kind")),
                    optional(in, "parent").map(NodeId::of), stringMap(in.get("labels")), (int) number(in, "depth"),
                    Instant.ofEpochMilli(number(in, "createdAt"))), text(in, "owner"),
                    in.hasNonNull("deletedAt") ? Optional.of(Instant.ofEpochMilli(number(in, "deletedAt")))
                            : Optional.empty(), strings(in.get("fallbacks")));
        } catch (RuntimeException e) {
            throw new Unreadable("not a valid node entry: " + e.getMessage());
        }
    }

    static byte[] grant(Grant grant) {
        ObjectNode out = JSON.createObjectNode();
        out.put("id", grant.id());
        out.put("from", grant.from().value());
        out.put("to", grant.to().wire());
        grant.expiresAt().ifPresent(t -> out.put("expiresAt", t.toEpochMilli()));
        out.put("note", grant.note());
        out.put("createdAt", grant.createdAt().toEpochMilli());
        return bytes(out);
    }

    static Grant grant(byte[] data) throws Unreadable {
        JsonNode in = tree(data);
        try {
            return new Grant(text(in, "id"), NodeId.of(text(in, "from")), GrantTarget.parse(text(in, "to")),
                    in.hasNonNull("expiresAt") ? Optional.of(Instant.ofEpochMilli(number(in, "expiresAt")))
                            : Optional.empty(), text(in, "note"), Instant.ofEpochMilli(number(in, "createdAt")));
        } catch (RuntimeException e) {
            throw new Unreadable("not a valid grant entry: " + e.getMessage());
        }
    }

    static byte[] presence(String gateway, String version, Instant at) {
        ObjectNode out = JSON.createObjectNode();
        out.put("gateway", gateway);
        out.put("version", version);
        out.put("at", at.toEpochMilli());
        return bytes(out);
    }

    static byte[] subscription(Subscription subscription) {
        ObjectNode out = JSON.createObjectNode();
        out.put("topic", subscription.topic().value());
        out.put("node", subscription.node().value());
        out.put("createdAt", subscription.createdAt().toEpochMilli());
        return bytes(out);
    }

    static Subscription subscription(byte[] data) throws Unreadable {
        JsonNode in = tree(data);
        try {
            return new Subscription(TopicName.of(text(in, "topic")), NodeId.of(text(in, "node")),
                    Instant.ofEpochMilli(number(in, "createdAt")));
        } catch (RuntimeException e) {
            throw new Unreadable("not a valid subscription entry: " + e.getMessage());
        }
    }

    /** A presence beat: the gateway, the version it runs, and when it beat. */
    record Beat(String gateway, String version, Instant at) {
    }

    static Beat presence(byte[] data) throws Unreadable {
        JsonNode in = tree(data);
        try {
            return new Beat(text(in, "gateway"), text(in, "version"), Instant.ofEpochMilli(number(in, "at")));
        } catch (RuntimeException e) {
            throw new Unreadable("not a valid presence entry: " + e.getMessage());
        }
    }

    private static JsonNode tree(byte[] data) throws Unreadable {
        try {
            JsonNode in = JSON.readTree(data);
            if (in == null || !in.isObject()) {
                throw new Unreadable("not a JSON object");
            }
            return in;
        } catch (IOException e) {
            throw new Unreadable("not JSON");
        }
    }

    /**
     * An envelope's data: one JSON value, written compact as a send's is, for streams and answers
     * embed it as it stands (a line break in it would end a stream's data line).
     */
    private static Optional<JsonText> data(JsonNode in) {
        return optional(in, "data").map(text -> {
            try {
                JsonNode value = ONE_VALUE.readTree(text);
                if (value != null && !value.isMissingNode()) {
                    return new JsonText(value.toString());
                }
            } catch (IOException e) {
                // said below, as for an empty text
            }
            throw new IllegalArgumentException("data is not one JSON value");
        });
    }

    private static String text(JsonNode in, String field) {
        JsonNode value = in.get(field);
        if (value == null || !value.isTextual()) {
            throw new IllegalArgumentException("missing text field " + field);
        }
        return value.asText();
    }

    private static long number(JsonNode in, String field) {
        JsonNode value = in.get(field);
        if (value == null || !value.canConvertToLong()) {
            throw new IllegalArgumentException("missing number field " + field);
        }
        return value.asLong();
    }

    private static Optional<String> optional(JsonNode in, String field) {
        JsonNode value = in.get(field);
        return value == null || value.isNull() ? Optional.empty() : Optional.of(value.asText());
    }

    private static List<String> strings(JsonNode in) {
        List<String> out = new ArrayList<>();
        if (in != null && in.isArray()) {
            in.forEach(item -> out.add(item.asText()));
        }
        return out;
    }

    private static Map<String, String> stringMap(JsonNode in) {
        Map<String, String> out = new LinkedHashMap<>();
        if (in != null && in.isObject()) {
            in.properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
        }
        return out;
    }

    private static byte[] bytes(ObjectNode out) {
        try {
            return JSON.writeValueAsBytes(out);
        } catch (IOException e) {
            throw new IllegalStateException("a JSON tree always serializes", e);
        }
    }
}
