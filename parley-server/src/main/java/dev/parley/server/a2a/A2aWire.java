package dev.parley.server.a2a;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.TraceContext;
import dev.parley.core.JsonText;
import dev.parley.core.Task;
import dev.parley.core.TaskEvent;
import dev.parley.core.TaskState;
import dev.parley.core.VisibleAscii;
import dev.parley.server.wire.Json;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The A2A data model on the wire, in both versions this hub speaks. Everything is built in
 * the v1.0 ProtoJSON shape ({@code specification/a2a.proto}: parts told apart by their member
 * name, enums as {@code TASK_STATE_*} / {@code ROLE_*}) and turned into the v0.3 shape
 * (a {@code kind} discriminator on parts, messages, tasks and events; lower-case states) when
 * the request said {@code A2A-Version: 0.3} or nothing.
 *
 * <p>Parley tasks as A2A tasks: {@code submitted → TASK_STATE_SUBMITTED}, {@code accepted} and
 * {@code working → TASK_STATE_WORKING}, {@code completed → TASK_STATE_COMPLETED},
 * {@code failed → TASK_STATE_FAILED}, {@code canceled → TASK_STATE_CANCELED}. The task's
 * {@code result} is the artifact {@code result}; each of its artifact URIs is an artifact of
 * one URL part. The message that created the task is its history.
 */
final class A2aWire {
    /** Media type of the HTTP+JSON binding (section 11.1). */
    static final String A2A_JSON = "application/a2a+json";
    private static final int MAX_ID = 200;

    private A2aWire() {
    }

    // ------------------------------------------------------------------ reading messages

    /** A message from the client, its parts in the v1.0 shape whatever the version it came in. */
    record Incoming(String messageId, Optional<String> contextId, Optional<String> taskId, ArrayNode parts,
                    Optional<JsonNode> metadata, List<String> referenceTaskIds) {
    }

    /** The W3C traceparent a client put in the message's metadata ({@code metadata.traceparent}), when valid. */
    static Optional<TraceContext> traceparent(Incoming message) {
        return message.metadata().map(m -> m.path("traceparent")).filter(JsonNode::isTextual)
                .flatMap(t -> TraceContext.parse(t.textValue()));
    }

    static Incoming message(JsonNode node, A2aVersion version) {
        if (!(node instanceof ObjectNode message)) {
            throw A2aError.invalidParams("message is required and must be an object");
        }
        if (version == A2aVersion.V0_3 && message.has("kind") && !"message".equals(message.get("kind").asText())) {
            throw A2aError.invalidParams("message.kind must be \"message\"");
        }
        String messageId = id(message, "messageId").orElseThrow(() ->
                A2aError.invalidParams("message.messageId is required"));
        JsonNode role = message.get("role");
        boolean user = role != null && (version == A2aVersion.V1_0
                ? "ROLE_USER".equals(role.asText()) || (role.isInt() && role.intValue() == 1)
                : "user".equals(role.asText()));
        if (!user) {
            throw A2aError.invalidParams("message.role must be " + (version == A2aVersion.V1_0 ? "ROLE_USER" : "\"user\"")
                    + ": the caller sends as the user of the agent it calls");
        }
        JsonNode parts = message.get("parts");
        if (!(parts instanceof ArrayNode array) || array.isEmpty()) {
            throw A2aError.invalidParams("message.parts must be a non-empty array");
        }
        ArrayNode normalized = Json.array();
        for (int i = 0; i < array.size(); i++) {
            normalized.add(version == A2aVersion.V1_0 ? v1Part(array.get(i), i) : v03Part(array.get(i), i));
        }
        List<String> references = new ArrayList<>();
        JsonNode refs = message.get("referenceTaskIds");
        if (refs != null && !refs.isNull()) {
            if (!refs.isArray()) {
                throw A2aError.invalidParams("message.referenceTaskIds must be an array of strings");
            }
            refs.forEach(r -> references.add(r.asText()));
        }
        JsonNode metadata = message.get("metadata");
        if (metadata != null && !metadata.isNull() && !metadata.isObject()) {
            throw A2aError.invalidParams("message.metadata must be an object");
        }
        return new Incoming(messageId, id(message, "contextId"), id(message, "taskId"), normalized,
                Optional.ofNullable(metadata).filter(JsonNode::isObject), references);
    }

    /** An optional identifier field: a non-empty string of printable ASCII without spaces (proto3's "" is absent). */
    static Optional<String> id(JsonNode object, String field) {
        JsonNode value = object.get(field);
        if (value == null || value.isNull() || (value.isTextual() && value.textValue().isEmpty())) {
            return Optional.empty();
        }
        if (!value.isTextual() || !VisibleAscii.within(value.textValue(), MAX_ID)) {
            throw A2aError.invalidParams(field + " must be a string of 1 to " + MAX_ID
                    + " printable ASCII characters without spaces");
        }
        return Optional.of(value.textValue());
    }

    private static ObjectNode v1Part(JsonNode node, int index) {
        if (!(node instanceof ObjectNode part)) {
            throw A2aError.invalidParams("message.parts[" + index + "] must be an object");
        }
        List<String> content = new ArrayList<>();
        for (String member : List.of("text", "raw", "url", "data")) {
            if (part.has(member)) {
                content.add(member);
            }
        }
        if (content.size() != 1) {
            throw A2aError.invalidParams("message.parts[" + index + "] has " + (content.isEmpty() ? "no" : "more than one")
                    + " content: a part is exactly one of text, raw, url or data"
                    + (part.has("kind") ? " (\"kind\" parts are A2A 0.3: send A2A-Version: 0.3 or none)" : ""));
        }
        String member = content.getFirst();
        JsonNode value = part.get(member);
        if (!member.equals("data") && !value.isTextual()) {
            throw A2aError.invalidParams("message.parts[" + index + "]." + member + " must be a string");
        }
        if (member.equals("raw")) {
            base64(value.textValue(), index);
        }
        if (member.equals("url")) {
            absoluteUri(value.textValue(), index);
        }
        ObjectNode out = Json.object();
        out.set(member, value);
        copyString(part, out, "mediaType", index);
        copyString(part, out, "filename", index);
        if (part.hasNonNull("metadata")) {
            if (!part.get("metadata").isObject()) {
                throw A2aError.invalidParams("message.parts[" + index + "].metadata must be an object");
            }
            out.set("metadata", part.get("metadata"));
        }
        return out;
    }

    private static ObjectNode v03Part(JsonNode node, int index) {
        if (!(node instanceof ObjectNode part)) {
            throw A2aError.invalidParams("message.parts[" + index + "] must be an object");
        }
        String kind = part.path("kind").asText("");
        ObjectNode out = Json.object();
        switch (kind) {
            case "text" -> {
                if (!part.path("text").isTextual()) {
                    throw A2aError.invalidParams("message.parts[" + index + "].text must be a string");
                }
                out.put("text", part.get("text").textValue());
            }
            case "data" -> {
                if (!part.path("data").isObject()) {
                    throw A2aError.invalidParams("message.parts[" + index + "].data must be an object");
                }
                out.set("data", part.get("data"));
                out.put("mediaType", "application/json");
            }
            case "file" -> {
                JsonNode file = part.get("file");
                if (!(file instanceof ObjectNode f) || f.has("uri") == f.has("bytes")) {
                    throw A2aError.invalidParams("message.parts[" + index + "].file must be an object with exactly one"
                            + " of uri and bytes");
                }
                String member = f.has("uri") ? "uri" : "bytes";
                if (!f.get(member).isTextual()) {
                    throw A2aError.invalidParams("message.parts[" + index + "].file." + member + " must be a string");
                }
                if (member.equals("uri")) {
                    absoluteUri(f.get("uri").textValue(), index);
                    out.put("url", f.get("uri").textValue());
                } else {
                    base64(f.get("bytes").textValue(), index);
                    out.put("raw", f.get("bytes").textValue());
                }
                if (f.path("mimeType").isTextual()) {
                    out.put("mediaType", f.get("mimeType").textValue());
                }
                if (f.path("name").isTextual()) {
                    out.put("filename", f.get("name").textValue());
                }
            }
            default -> throw A2aError.invalidParams("message.parts[" + index + "] has an unknown kind '" + kind
                    + "': a part is of kind text, file or data");
        }
        if (part.hasNonNull("metadata")) {
            out.set("metadata", part.get("metadata"));
        }
        return out;
    }

    private static void copyString(ObjectNode from, ObjectNode to, String field, int index) {
        JsonNode value = from.get(field);
        if (value == null || value.isNull()) {
            return;
        }
        if (!value.isTextual()) {
            throw A2aError.invalidParams("message.parts[" + index + "]." + field + " must be a string");
        }
        if (!value.textValue().isEmpty()) {
            to.put(field, value.textValue());
        }
    }

    private static void base64(String value, int index) {
        try {
            Base64.getDecoder().decode(value);
        } catch (IllegalArgumentException e) {
            throw A2aError.invalidParams("message.parts[" + index + "] carries bytes that are not base64");
        }
    }

    private static void absoluteUri(String value, int index) {
        try {
            if (new java.net.URI(value).isAbsolute()) {
                return;
            }
        } catch (java.net.URISyntaxException e) {
            // refused below
        }
        throw A2aError.invalidParams("message.parts[" + index + "] must name its file by an absolute URI");
    }

    /**
     * The Parley content of a message: its text parts joined as {@code text}, its data parts
     * as {@code data} (one value, or an array of them), its file parts as {@code files} of
     * URIs (bytes become {@code data:} URIs), and the message itself under {@code a2a}.
     */
    static ObjectNode content(Incoming message, String contextId) {
        List<String> texts = new ArrayList<>();
        List<JsonNode> data = new ArrayList<>();
        ArrayNode files = Json.array();
        for (JsonNode part : message.parts()) {
            if (part.has("text")) {
                texts.add(part.get("text").textValue());
            } else if (part.has("data")) {
                data.add(part.get("data"));
            } else {
                ObjectNode file = files.addObject();
                String mediaType = part.path("mediaType").asText("application/octet-stream");
                file.put("url", part.has("url") ? part.get("url").textValue()
                        : "data:" + mediaType + ";base64," + part.get("raw").textValue());
                file.put("mediaType", mediaType);
                if (part.has("filename")) {
                    file.put("filename", part.get("filename").textValue());
                }
            }
        }
        ObjectNode out = Json.object();
        if (!texts.isEmpty()) {
            out.put("text", String.join("\n", texts));
        }
        if (data.size() == 1) {
            out.set("data", data.getFirst());
        } else if (!data.isEmpty()) {
            ArrayNode all = out.putArray("data");
            data.forEach(all::add);
        }
        if (!files.isEmpty()) {
            out.set("files", files);
        }
        ObjectNode a2a = out.putObject("a2a");
        a2a.put("messageId", message.messageId());
        a2a.put("contextId", contextId);
        a2a.set("parts", message.parts());
        message.metadata().ifPresent(m -> a2a.set("metadata", m));
        if (!message.referenceTaskIds().isEmpty()) {
            ArrayNode refs = a2a.putArray("referenceTaskIds");
            message.referenceTaskIds().forEach(refs::add);
        }
        return out;
    }

    /** The joined text of a message, if it has text parts. */
    static Optional<String> text(ObjectNode content) {
        return content.has("text") ? Optional.of(content.get("text").textValue()) : Optional.empty();
    }

    // ------------------------------------------------------------------ tasks (v1.0 shape)

    /** The context of a task: the one its first message named or was given, else the task id. */
    static String contextId(Task task) {
        return a2aInput(task).map(a -> a.path("contextId").asText("")).filter(s -> !s.isEmpty()).orElse(task.id());
    }

    private static Optional<JsonNode> a2aInput(Task task) {
        return task.input().map(i -> tree(i.json())).filter(n -> n.path("a2a").isObject()).map(n -> n.get("a2a"));
    }

    static String state(TaskState state) {
        return switch (state) {
            case SUBMITTED -> "TASK_STATE_SUBMITTED";
            case ACCEPTED, WORKING -> "TASK_STATE_WORKING";
            case COMPLETED -> "TASK_STATE_COMPLETED";
            case FAILED -> "TASK_STATE_FAILED";
            case CANCELED -> "TASK_STATE_CANCELED";
        };
    }

    /** The Parley states an A2A state filter selects (none for the states Parley never reaches). */
    static List<TaskState> parleyStates(String a2aState) {
        String s = a2aState.strip().toUpperCase(Locale.ROOT).replace('-', '_');
        if (!s.startsWith("TASK_STATE_")) {
            s = "TASK_STATE_" + s;
        }
        return switch (s) {
            case "TASK_STATE_SUBMITTED" -> List.of(TaskState.SUBMITTED);
            case "TASK_STATE_WORKING" -> List.of(TaskState.ACCEPTED, TaskState.WORKING);
            case "TASK_STATE_COMPLETED" -> List.of(TaskState.COMPLETED);
            case "TASK_STATE_FAILED" -> List.of(TaskState.FAILED);
            case "TASK_STATE_CANCELED" -> List.of(TaskState.CANCELED);
            case "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED" -> List.of();
            case "TASK_STATE_UNSPECIFIED" -> List.of(TaskState.values());
            default -> throw A2aError.invalidParams("status must be a TaskState such as TASK_STATE_WORKING, not '"
                    + a2aState + "'");
        };
    }

    static ObjectNode status(Task task) {
        ObjectNode status = Json.object();
        status.put("state", state(task.state()));
        statusMessage(task).ifPresent(m -> status.set("message", m));
        status.put("timestamp", Json.time(task.updatedAt()));
        return status;
    }

    /** What the agent said with the task's current state: acceptance, progress, or the reason it ended. */
    private static Optional<ObjectNode> statusMessage(Task task) {
        ArrayNode parts = Json.array();
        switch (task.state()) {
            case ACCEPTED -> parts.addObject().put("text", "accepted by " + task.assignee()
                    + task.etaSeconds().map(s -> " (eta " + s + " s)").orElse(""));
            case WORKING -> task.progress().ifPresent(p -> parts.add(part(tree(p.json()))));
            case FAILED, CANCELED -> task.reason().filter(r -> !r.isBlank())
                    .ifPresent(r -> parts.addObject().put("text", r));
            default -> {
            }
        }
        if (parts.isEmpty()) {
            return Optional.empty();
        }
        ObjectNode message = Json.object();
        message.put("messageId", task.id() + "." + task.state().wire() + "." + task.updatedAt().toEpochMilli());
        message.put("contextId", contextId(task));
        message.put("taskId", task.id());
        message.put("role", "ROLE_AGENT");
        message.set("parts", parts);
        return Optional.of(message);
    }

    /** A JSON value as a part: a string as text, anything else as data. */
    private static ObjectNode part(JsonNode value) {
        ObjectNode part = Json.object();
        if (value.isTextual()) {
            part.put("text", value.textValue());
        } else {
            part.set("data", value);
            part.put("mediaType", "application/json");
        }
        return part;
    }

    static List<ObjectNode> artifacts(Task task) {
        List<ObjectNode> out = new ArrayList<>();
        task.result().ifPresent(result -> {
            ObjectNode artifact = Json.object();
            artifact.put("artifactId", "result");
            artifact.put("name", "result");
            artifact.putArray("parts").add(part(tree(result.json())));
            out.add(artifact);
        });
        int n = 0;
        for (TaskEvent.Artifact a : task.artifacts()) {
            n++;
            ObjectNode artifact = Json.object();
            artifact.put("artifactId", "artifact-" + n);
            String name = a.uri().replaceAll("[?#].*$", "").replaceAll("^.*/", "");
            artifact.put("name", name.isEmpty() ? a.uri() : name);
            ObjectNode part = artifact.putArray("parts").addObject();
            part.put("url", a.uri());
            part.put("mediaType", a.mediaType());
            if (!name.isEmpty()) {
                part.put("filename", name);
            }
            out.add(artifact);
        }
        return out;
    }

    /** The message that created the task, as the task's history. */
    private static Optional<ObjectNode> firstMessage(Task task) {
        Optional<JsonNode> a2a = a2aInput(task);
        ObjectNode message = Json.object();
        if (a2a.isPresent()) {
            message.put("messageId", a2a.get().path("messageId").asText(task.id()));
            message.put("contextId", contextId(task));
            message.put("taskId", task.id());
            message.put("role", "ROLE_USER");
            message.set("parts", a2a.get().path("parts"));
            if (a2a.get().has("metadata")) {
                message.set("metadata", a2a.get().get("metadata"));
            }
            if (a2a.get().has("referenceTaskIds")) {
                message.set("referenceTaskIds", a2a.get().get("referenceTaskIds"));
            }
            return Optional.of(message);
        }
        if (task.input().isEmpty()) {
            return Optional.empty();
        }
        message.put("messageId", task.id());
        message.put("contextId", contextId(task));
        message.put("taskId", task.id());
        message.put("role", "ROLE_USER");
        message.putArray("parts").add(part(tree(task.input().get().json())));
        return Optional.of(message);
    }

    /**
     * A Parley task as an A2A {@code Task}. {@code historyLength} 0 leaves out the history;
     * without {@code includeArtifacts} the artifacts field is left out (as ListTasks asks).
     */
    static ObjectNode task(Task task, A2aVersion version, Optional<Integer> historyLength, boolean includeArtifacts) {
        ObjectNode out = Json.object();
        out.put("id", task.id());
        out.put("contextId", contextId(task));
        out.set("status", status(task));
        if (includeArtifacts) {
            ArrayNode artifacts = out.putArray("artifacts");
            artifacts(task).forEach(artifacts::add);
        }
        if (historyLength.orElse(1) > 0) {
            firstMessage(task).ifPresent(m -> out.putArray("history").add(m));
        }
        ObjectNode parley = out.putObject("metadata").putObject("parley");
        parley.put("state", task.state().wire());
        parley.put("creator", task.creator().value());
        parley.put("assignee", task.assignee().value());
        parley.put("title", task.title());
        task.etaSeconds().ifPresent(s -> parley.put("etaSeconds", s));
        parley.put("createdAt", Json.time(task.createdAt()));
        return version == A2aVersion.V1_0 ? out : v03Task(out);
    }

    static ObjectNode statusEvent(Task task, A2aVersion version) {
        ObjectNode event = Json.object();
        event.put("taskId", task.id());
        event.put("contextId", contextId(task));
        event.set("status", status(task));
        if (version == A2aVersion.V1_0) {
            return event;
        }
        ObjectNode legacy = Json.object();
        legacy.put("kind", "status-update");
        legacy.put("taskId", task.id());
        legacy.put("contextId", contextId(task));
        legacy.set("status", v03Status((ObjectNode) event.get("status")));
        legacy.put("final", task.state().terminal());
        return legacy;
    }

    static ObjectNode artifactEvent(Task task, ObjectNode artifact, A2aVersion version) {
        ObjectNode event = Json.object();
        if (version == A2aVersion.V0_3) {
            event.put("kind", "artifact-update");
        }
        event.put("taskId", task.id());
        event.put("contextId", contextId(task));
        event.set("artifact", version == A2aVersion.V1_0 ? artifact : v03Artifact(artifact));
        event.put("append", false);
        event.put("lastChunk", true);
        return event;
    }

    /** One item of a stream: v1.0 wraps it in a StreamResponse member, v0.3 sends it as is (it has a kind). */
    static ObjectNode streamItem(String member, ObjectNode payload, A2aVersion version) {
        if (version == A2aVersion.V0_3) {
            return payload;
        }
        ObjectNode out = Json.object();
        out.set(member, payload);
        return out;
    }

    // ------------------------------------------------------------------ v0.3 shapes

    static ObjectNode v03Task(ObjectNode v1) {
        ObjectNode out = Json.object();
        out.put("kind", "task");
        out.put("id", v1.get("id").textValue());
        out.put("contextId", v1.get("contextId").textValue());
        out.set("status", v03Status((ObjectNode) v1.get("status")));
        if (v1.has("artifacts")) {
            ArrayNode artifacts = out.putArray("artifacts");
            v1.get("artifacts").forEach(a -> artifacts.add(v03Artifact((ObjectNode) a)));
        }
        if (v1.has("history")) {
            ArrayNode history = out.putArray("history");
            v1.get("history").forEach(m -> history.add(v03Message((ObjectNode) m)));
        }
        if (v1.has("metadata")) {
            out.set("metadata", v1.get("metadata"));
        }
        return out;
    }

    private static ObjectNode v03Status(ObjectNode v1) {
        ObjectNode out = Json.object();
        out.put("state", v1.get("state").textValue().substring("TASK_STATE_".length()).toLowerCase(Locale.ROOT)
                .replace('_', '-'));
        if (v1.has("message")) {
            out.set("message", v03Message((ObjectNode) v1.get("message")));
        }
        out.put("timestamp", v1.get("timestamp").textValue());
        return out;
    }

    static ObjectNode v03Message(ObjectNode v1) {
        ObjectNode out = Json.object();
        out.put("kind", "message");
        out.put("messageId", v1.get("messageId").textValue());
        if (v1.has("contextId")) {
            out.put("contextId", v1.get("contextId").textValue());
        }
        if (v1.has("taskId")) {
            out.put("taskId", v1.get("taskId").textValue());
        }
        out.put("role", "ROLE_AGENT".equals(v1.path("role").asText()) ? "agent" : "user");
        ArrayNode parts = out.putArray("parts");
        v1.path("parts").forEach(p -> parts.add(v03Part((ObjectNode) p)));
        if (v1.has("metadata")) {
            out.set("metadata", v1.get("metadata"));
        }
        if (v1.has("referenceTaskIds")) {
            out.set("referenceTaskIds", v1.get("referenceTaskIds"));
        }
        return out;
    }

    private static ObjectNode v03Artifact(ObjectNode v1) {
        ObjectNode out = Json.object();
        out.put("artifactId", v1.get("artifactId").textValue());
        if (v1.has("name")) {
            out.put("name", v1.get("name").textValue());
        }
        ArrayNode parts = out.putArray("parts");
        v1.path("parts").forEach(p -> parts.add(v03Part((ObjectNode) p)));
        return out;
    }

    private static ObjectNode v03Part(ObjectNode v1) {
        ObjectNode out = Json.object();
        if (v1.has("text")) {
            out.put("kind", "text");
            out.put("text", v1.get("text").textValue());
        } else if (v1.has("data")) {
            out.put("kind", "data");
            JsonNode data = v1.get("data");
            if (data.isObject()) {
                out.set("data", data);
            } else { // 0.3 data parts hold objects only
                out.putObject("data").set("value", data);
            }
        } else {
            out.put("kind", "file");
            ObjectNode file = out.putObject("file");
            if (v1.has("url")) {
                file.put("uri", v1.get("url").textValue());
            } else {
                file.put("bytes", v1.path("raw").asText());
            }
            if (v1.has("mediaType")) {
                file.put("mimeType", v1.get("mediaType").textValue());
            }
            if (v1.has("filename")) {
                file.put("name", v1.get("filename").textValue());
            }
        }
        if (v1.has("metadata")) {
            out.set("metadata", v1.get("metadata"));
        }
        return out;
    }

    // ------------------------------------------------------------------ push-notification configs

    /** A push-notification config as a client sent it. */
    record PushConfig(Optional<String> id, String url, Optional<String> token, Optional<String> scheme,
                      Optional<String> credentials) {
    }

    /** v1.0 {@code TaskPushNotificationConfig} (flat), or v0.3 {@code PushNotificationConfig}. */
    static PushConfig pushConfig(JsonNode node, A2aVersion version, String field) {
        if (!(node instanceof ObjectNode config)) {
            throw A2aError.invalidParams(field + " must be an object");
        }
        JsonNode url = config.get("url");
        if (url == null || !url.isTextual() || url.textValue().isBlank()) {
            throw A2aError.invalidParams(field + ".url is required");
        }
        Optional<String> token = optionalString(config, "token", field);
        Optional<String> scheme = Optional.empty();
        Optional<String> credentials = Optional.empty();
        JsonNode auth = config.get("authentication");
        if (auth != null && !auth.isNull()) {
            if (!auth.isObject()) {
                throw A2aError.invalidParams(field + ".authentication must be an object");
            }
            if (version == A2aVersion.V1_0) {
                scheme = optionalString(auth, "scheme", field + ".authentication");
            } else {
                JsonNode schemes = auth.get("schemes");
                if (schemes != null && !schemes.isArray()) {
                    throw A2aError.invalidParams(field + ".authentication.schemes must be an array of strings");
                }
                if (schemes != null && !schemes.isEmpty()) {
                    scheme = Optional.of(schemes.get(0).asText());
                }
            }
            credentials = optionalString(auth, "credentials", field + ".authentication");
        }
        return new PushConfig(id(config, "id"), url.textValue(), token, scheme.filter(s -> !s.isBlank()), credentials);
    }

    private static Optional<String> optionalString(JsonNode object, String name, String field) {
        JsonNode value = object.get(name);
        if (value == null || value.isNull()) {
            return Optional.empty();
        }
        if (!value.isTextual()) {
            throw A2aError.invalidParams(field + "." + name + " must be a string");
        }
        return value.textValue().isEmpty() ? Optional.empty() : Optional.of(value.textValue());
    }

    /** A stored webhook as the config the client set (credentials are never shown back). */
    static ObjectNode pushConfig(dev.parley.core.TaskWebhook webhook, A2aVersion version) {
        ObjectNode config = Json.object();
        if (version == A2aVersion.V1_0) {
            config.put("taskId", webhook.taskId());
        }
        config.put("id", webhook.id());
        config.put("url", webhook.url());
        webhook.token().ifPresent(t -> config.put("token", t));
        webhook.authScheme().ifPresent(s -> {
            ObjectNode auth = config.putObject("authentication");
            if (version == A2aVersion.V1_0) {
                auth.put("scheme", s);
            } else {
                auth.putArray("schemes").add(s);
            }
        });
        if (version == A2aVersion.V1_0) {
            return config;
        }
        ObjectNode out = Json.object();
        out.put("taskId", webhook.taskId());
        out.set("pushNotificationConfig", config);
        return out;
    }

    // ------------------------------------------------------------------ JSON helpers

    static JsonNode tree(String json) {
        try {
            return Json.MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored JSON does not parse", e);
        }
    }

    static JsonText jsonText(JsonNode node) {
        return new JsonText(new String(Json.bytes(node), java.nio.charset.StandardCharsets.UTF_8));
    }

    static Map<String, String> none() {
        return Map.of();
    }
}
