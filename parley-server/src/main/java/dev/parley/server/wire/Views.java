package dev.parley.server.wire;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Appended;
import dev.parley.core.ApprovalCard;
import dev.parley.core.Capability;
import dev.parley.core.ChatPlatform;
import dev.parley.core.Chats;
import dev.parley.core.MessagingGroup;
import dev.parley.core.Payload;
import dev.parley.core.Envelope;
import dev.parley.core.ParleyException;
import dev.parley.core.Payload;
import dev.parley.core.Schedule;
import dev.parley.core.SendOutcome;
import dev.parley.core.Timing;
import dev.parley.core.TaskState;
import dev.parley.core.AuditRecord;
import dev.parley.core.Grant;
import dev.parley.core.InboxSummary;
import dev.parley.core.Inboxes;
import dev.parley.core.MessageRecord;
import dev.parley.core.Node;
import dev.parley.core.NodeId;
import dev.parley.core.TimelineEntry;
import dev.parley.core.JsonText;
import dev.parley.core.Peers;
import dev.parley.core.Publication;
import dev.parley.core.SkillReview;
import dev.parley.core.Subscription;
import dev.parley.core.StoredSchema;
import dev.parley.core.Task;
import dev.parley.core.TaskEvent;
import dev.parley.core.TaskFormat;

import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Map;
import java.util.List;
import java.util.Optional;

/** Domain values as the JSON bodies of the contract. */
public final class Views {
    private Views() {
    }

    /** A node; {@code gateway} (its owner in a federation) is shown only when there is one. */
    public static ObjectNode node(Node node, List<NodeId> children, List<NodeId> group, Optional<String> gateway) {
        ObjectNode out = Json.object();
        out.put("id", node.id().value());
        out.put("kind", node.kind().wire());
        out.put("parent", node.parent().map(NodeId::value).orElse(null));
        var childArray = out.putArray("children");
        children.forEach(c -> childArray.add(c.value()));
        var groupArray = out.putArray("group");
        group.forEach(g -> groupArray.add(g.value()));
        out.put("depth", node.depth());
        var labels = out.putObject("labels");
        node.labels().forEach(labels::put);
        out.put("createdAt", Json.time(node.createdAt()));
        gateway.ifPresent(g -> out.put("gateway", g));
        return out;
    }

    public static ObjectNode grant(Grant grant) {
        ObjectNode out = Json.object();
        out.put("id", grant.id());
        out.put("from", grant.from().value());
        out.put("to", grant.to().wire());
        out.put("expiresAt", grant.expiresAt().map(Json::time).orElse(null));
        out.put("note", grant.note());
        out.put("createdAt", Json.time(grant.createdAt()));
        return out;
    }

    public static ObjectNode accepted(Appended appended) {
        ObjectNode out = Json.object();
        out.put("id", appended.envelope().id());
        // For a node of another gateway, the seq is the owner's to assign: null here, and "gateway" names it.
        if (appended.relayed().isPresent()) {
            out.putNull("seq");
        } else {
            out.put("seq", appended.envelope().seq());
        }
        out.put("to", appended.envelope().to().value());
        out.put("status", appended.relayed().map(r -> r.spooled() ? "spooled" : "accepted").orElse("accepted"));
        appended.relayed().ifPresent(r -> out.put("gateway", r.gateway()));
        out.put("createdAt", Json.time(appended.envelope().createdAt()));
        if (appended.duplicate()) {
            out.put("duplicate", true);
        }
        return out;
    }

    /**
     * The body of an error: its code, its message in the user's words, its details; a rate
     * limit's wait ({@code retryAfter}) as a number of seconds.
     */
    public static ObjectNode error(ParleyException e) {
        ObjectNode body = Json.object();
        body.put("error", e.code().wire());
        body.put("message", e.getMessage());
        e.details().forEach(body::put);
        String retryAfter = e.details().get("retryAfter");
        if (retryAfter != null && retryAfter.matches("\\d{1,9}")) {
            body.put("retryAfter", Long.parseLong(retryAfter));
        }
        return body;
    }

    /**
     * A batch's answer: one result per message in the order sent, each the answer a single
     * send would have had with its HTTP status as {@code httpStatus} (202 accepted, 200 a
     * duplicate, or the refusal's), and how many went each way.
     */
    public static ObjectNode batch(List<SendOutcome> outcomes) {
        ObjectNode out = Json.object();
        ArrayNode results = out.putArray("results");
        int accepted = 0;
        int duplicates = 0;
        for (SendOutcome outcome : outcomes) {
            switch (outcome) {
                case SendOutcome.Sent sent -> {
                    boolean duplicate = sent.appended().duplicate();
                    results.add(accepted(sent.appended()).put("httpStatus", duplicate ? 200 : 202));
                    if (duplicate) {
                        duplicates++;
                    } else {
                        accepted++;
                    }
                }
                case SendOutcome.Refused refused ->
                        results.add(error(refused.refusal()).put("httpStatus", refused.refusal().code().status()));
            }
        }
        out.put("accepted", accepted);
        out.put("duplicates", duplicates);
        out.put("refused", outcomes.size() - accepted - duplicates);
        return out;
    }

    /**
     * A scheduled send: when it fires ({@code cron} or {@code deliverAt}, read in {@code timeZone};
     * {@code nextAt} in UTC, null once it ended), what it sends, and what became of it.
     */
    public static ObjectNode schedule(Schedule schedule, boolean duplicate) {
        ObjectNode out = Json.object();
        out.put("scheduleId", schedule.id());
        out.put("state", schedule.state().wire());
        out.put("from", schedule.from().value());
        out.put("to", schedule.to().value());
        out.put("kind", schedule.kind());
        switch (schedule.timing()) {
            case Timing.Once once -> out.put("deliverAt", once.deliverAt());
            case Timing.Cron cron -> out.put("cron", cron.expression());
        }
        out.put("timeZone", schedule.zone().getId());
        out.put("nextAt", schedule.nextAt().map(Json::time).orElse(null));
        Payload payload = schedule.payload();
        out.put("text", payload.text().orElse(null));
        out.set("data", raw(payload.data()));
        out.put("corrId", payload.corrId().orElse(null));
        out.put("threadId", payload.threadId().orElse(null));
        out.put("messageId", payload.messageId().orElse(null));
        var meta = out.putObject("meta");
        payload.meta().forEach(meta::put);
        schedule.replyWithin().ifPresent(d -> out.put("replyWithinMs", d.toMillis()));
        out.put("fired", schedule.fired());
        out.put("skipped", schedule.skipped());
        out.put("lastFiredAt", schedule.lastFiredAt().map(Json::time).orElse(null));
        out.put("detail", schedule.detail().orElse(null));
        out.put("createdAt", Json.time(schedule.createdAt()));
        out.put("endedAt", schedule.endedAt().map(Json::time).orElse(null));
        if (duplicate) {
            out.put("duplicate", true);
        }
        return out;
    }

    /** A claim of the agent protocol: the envelope is {@code processing}, its claimant at work. */
    public static ObjectNode claim(dev.parley.core.Claim claim) {
        ObjectNode out = Json.object();
        out.put("id", claim.envelopeId());
        out.put("state", dev.parley.core.DeliveryState.PROCESSING.wire());
        out.put("claimant", claim.node().value());
        out.put("claimedAt", Json.time(claim.claimedAt()));
        out.put("tries", claim.tries());
        if (claim.declared().isPresent()) {
            out.put("timeoutMs", claim.declared().get().toMillis());
        }
        claim.heartbeat().ifPresent(beat -> {
            ObjectNode heartbeat = out.putObject("heartbeat");
            heartbeat.put("at", Json.time(beat.at()));
            beat.tool().ifPresent(tool -> heartbeat.put("tool", tool));
            beat.toolStartedAt().ifPresent(at -> heartbeat.put("toolStartedAt", Json.time(at)));
        });
        return out;
    }

    /** An envelope's status; with the claim its receiver holds on it, while it is {@code processing}. */
    public static ObjectNode message(MessageRecord record, Optional<dev.parley.core.Claim> claim) {
        ObjectNode out = message(record);
        claim.ifPresent(c -> {
            ObjectNode view = claim(c);
            view.remove(List.of("id", "state"));
            out.set("claim", view);
        });
        return out;
    }

    public static ObjectNode message(MessageRecord record) {
        var e = record.envelope();
        ObjectNode out = Json.object();
        out.put("id", e.id());
        out.put("seq", e.seq());
        out.put("from", e.from().value());
        out.put("to", e.to().value());
        out.put("kind", e.kind());
        out.put("state", record.state().wire());
        var timeline = out.putArray("timeline");
        for (TimelineEntry step : record.timeline()) {
            ObjectNode entry = timeline.addObject();
            entry.put("state", step.state().wire());
            entry.put("at", Json.time(step.at()));
            entry.put("detail", step.detail());
        }
        out.put("corrId", e.corrId().orElse(null));
        out.put("threadId", e.threadId().orElse(null));
        out.put("createdAt", Json.time(e.createdAt()));
        out.set("envelope", Json.envelopeTree(e));
        return out;
    }

    public static ObjectNode audit(AuditRecord record) {
        var a = record.entry();
        ObjectNode out = Json.object();
        out.put("at", Json.time(a.at()));
        out.put("actor", a.actor());
        out.put("action", a.action());
        out.put("target", a.target());
        out.put("decision", a.decision().wire());
        out.put("reason", a.reason());
        out.put("envelopeId", a.envelopeId().orElse(null));
        out.put("policyVersion", a.policyVersion());
        out.put("rule", a.rule().orElse(null));
        out.put("id", record.id());
        return out;
    }

    // Payload schemas.

    public static ObjectNode schema(StoredSchema schema) {
        ObjectNode out = Json.object();
        out.put("kind", schema.kind());
        out.set("schema", raw(Optional.of(schema.schema())));
        out.put("version", schema.version());
        out.put("updatedAt", Json.time(schema.updatedAt()));
        return out;
    }

    // Topics, broadcasts and tasks.

    /** Tasks as the data of the envelopes that carry them: the same view {@code GET /v1/tasks/{id}} answers. */
    public static final TaskFormat TASK_FORMAT = new TaskFormat() {
        @Override
        public JsonText assignment(Task task) {
            ObjectNode out = Json.object();
            out.put("taskId", task.id());
            out.put("title", task.title());
            out.set("input", raw(task.input()));
            return jsonText(out);
        }

        @Override
        public JsonText view(Task task) {
            return jsonText(task(task));
        }

        @Override
        public Optional<Task> assigned(Envelope assignment) {
            try {
                JsonNode data = Json.MAPPER.readTree(assignment.data().map(JsonText::json).orElse("null"));
                return Optional.of(Task.submitted(required(data, "taskId"), assignment.from(), assignment.to(),
                        required(data, "title"), json(data.get("input")), false, assignment.createdAt()));
            } catch (JsonProcessingException | IllegalArgumentException e) {
                return Optional.empty();
            }
        }

        @Override
        public Optional<Task> viewed(JsonText view) {
            try {
                return Optional.of(task(Json.MAPPER.readTree(view.json())));
            } catch (JsonProcessingException | IllegalArgumentException | ParleyException | DateTimeException e) {
                return Optional.empty();
            }
        }

        @Override
        public JsonText distribution(Capability capability) {
            ObjectNode out = Json.object();
            out.put("type", "skill_distribution");
            out.put("capabilityId", capability.id());
            out.put("owner", capability.owner().value());
            out.set("delegationSkill", skill(capability.delegation()));
            out.set("contract", raw(capability.contract()));
            out.put("etaSeconds", capability.eta().toSeconds());
            return jsonText(out);
        }
    };

    /** A messaging group with its wirings. */
    public static ObjectNode messagingGroup(MessagingGroup g, List<MessagingGroup.Wiring> wirings) {
        ObjectNode out = Json.object();
        out.put("id", g.id());
        out.put("platform", g.platform());
        out.put("room", g.room());
        out.put("kind", g.kind().wire());
        out.put("name", g.name());
        out.put("unknownSenderPolicy", g.unknownSenders().wire());
        out.put("approver", g.approver().map(NodeId::value).orElse(null));
        out.put("deniedAt", g.deniedAt().map(Json::time).orElse(null));
        out.put("createdAt", Json.time(g.createdAt()));
        var items = out.putArray("wirings");
        wirings.forEach(w -> items.add(wiring(w)));
        return out;
    }

    public static ObjectNode wiring(MessagingGroup.Wiring w) {
        ObjectNode out = Json.object();
        out.put("groupId", w.groupId());
        out.put("agent", w.agent().value());
        out.put("engageMode", w.mode().wire());
        out.put("engagePattern", w.pattern().orElse(null));
        out.put("senderScope", w.scope().wire());
        out.put("ignoredMessagePolicy", w.ignored().wire());
        return out;
    }

    /** An approval card: what it asks, about whom, the held message, how to answer. */
    public static ObjectNode approvalCard(ApprovalCard card) {
        ObjectNode out = Json.object();
        out.put("id", card.id());
        out.put("kind", card.kind().wire());
        out.put("title", card.kind() == ApprovalCard.Kind.SENDER ? "New sender" : "New room");
        out.put("groupId", card.groupId());
        out.put("platform", card.held().platform());
        out.put("room", card.held().room());
        out.put("roomName", card.held().roomName());
        out.put("user", card.held().user());
        out.put("userName", card.held().userName());
        out.put("text", card.held().text());
        out.put("saidAt", Json.time(card.held().at()));
        out.put("approver", card.approver().map(NodeId::value).orElse(null));
        out.put("raisedAt", Json.time(card.raisedAt()));
        var actions = out.putArray("actions");
        actions.addObject().put("id", "approve").put("label", "Approve");
        actions.addObject().put("id", "reject").put("label", card.kind() == ApprovalCard.Kind.SENDER ? "Reject" : "Deny");
        out.put("answer", "POST /v1/chat/cards/" + card.id() + "/answer {\"decision\": \"approve\"|\"reject\""
                + (card.kind() == ApprovalCard.Kind.ROOM ? ", \"agents\": [node, …]" : "") + "}");
        return out;
    }

    /** The content of the envelope that brings {@code card} to its approver: a text fallback and the card as data. */
    public static Payload approvalCardNotice(ApprovalCard card) {
        String text = card.kind() == ApprovalCard.Kind.SENDER
                ? "New sender " + card.held().userName() + " in " + card.held().roomName() + " (" + card.held().platform()
                + ") says: " + card.held().text() + " — approve or reject card " + card.id()
                : "New room " + card.held().roomName() + " (" + card.held().platform() + "): " + card.held().userName()
                + " called the bot — approve (naming agents) or deny card " + card.id();
        return new Payload(Optional.of(text), Optional.of(jsonText(approvalCard(card))), Optional.of(card.id()),
                Optional.empty(), Optional.empty(), Map.of());
    }

    /** A chat platform as the admin sees it: never a secret or password, only whether one is set; an IRC network's connection. */
    public static ObjectNode chatPlatform(ChatPlatform platform, Optional<Boolean> connected) {
        ObjectNode out = Json.object();
        out.put("id", platform.id());
        switch (platform) {
            case ChatPlatform.Bridge bridge -> out.put("kind", "webhook").put("outboundUrl",
                    bridge.outboundUrl().orElse(null));
            case ChatPlatform.Irc irc -> {
                out.put("kind", "irc").put("server", irc.server()).put("tls", irc.tls()).put("nick", irc.nick());
                irc.channels().forEach(out.putArray("channels")::add);
                out.put("password", irc.password().isPresent());
            }
        }
        connected.ifPresent(up -> out.put("connected", up));
        return out;
    }

    /** What became of a chat message handed in. */
    public static ObjectNode handled(Chats.Handled handled) {
        ObjectNode out = Json.object();
        out.put("outcome", handled.dropped().isPresent() ? "dropped" : handled.card().isPresent() ? "held" : "delivered");
        for (var list : List.of(Map.entry("woken", handled.woken()), Map.entry("context", handled.context()),
                Map.entry("skipped", handled.skipped()), Map.entry("refused", handled.refused()))) {
            var items = out.putArray(list.getKey());
            list.getValue().forEach(n -> items.add(n.value()));
        }
        out.put("card", handled.card().orElse(null));
        out.put("reason", handled.dropped().orElse(null));
        return out;
    }

    /** A capability as the catalog shows it. */
    public static ObjectNode capability(Capability capability) {
        ObjectNode out = Json.object();
        out.put("capabilityId", capability.id());
        out.put("owner", capability.owner().value());
        out.set("delegationSkill", skill(capability.delegation()));
        out.set("executorSkill", skill(capability.executor()));
        out.set("contract", raw(capability.contract()));
        out.put("etaSeconds", capability.eta().toSeconds());
        out.put("publishedAt", Json.time(capability.publishedAt()));
        return out;
    }

    /** A skill review, as listed and as its notice's data. */
    public static ObjectNode skillReview(SkillReview review) {
        ObjectNode out = Json.object();
        out.put("id", review.id());
        out.put("capabilityId", review.capabilityId());
        out.put("owner", review.owner().value());
        out.set("delegationSkill", skill(review.delegation()));
        out.set("executorSkill", skill(review.executor()));
        out.put("failure", review.failure().wire());
        out.put("detail", review.detail());
        var samples = out.putArray("sampleIds");
        review.sampleIds().forEach(samples::add);
        out.put("raisedAt", Json.time(review.raisedAt()));
        return out;
    }

    /** {@link #skillReview} as the data of the review's notice. */
    public static JsonText skillReviewData(SkillReview review) {
        return jsonText(skillReview(review));
    }

    private static ObjectNode skill(Capability.SkillRef skill) {
        ObjectNode out = Json.object();
        out.put("ref", skill.ref());
        out.put("version", skill.version());
        return out;
    }

    /** A task from its view ({@link #task(Task)}); throws when the view lacks what a task needs. */
    private static Task task(JsonNode view) {
        List<TaskEvent.Artifact> artifacts = new ArrayList<>();
        view.path("artifacts").forEach(a -> artifacts.add(new TaskEvent.Artifact(a.path("uri").asText(),
                a.path("mediaType").asText("application/octet-stream"))));
        return new Task(required(view, "id"), NodeId.of(required(view, "creator")),
                NodeId.of(required(view, "assignee")), view.path("title").asText(), json(view.get("input")),
                TaskState.parse(required(view, "state")), view.path("ephemeral").asBoolean(false),
                view.hasNonNull("etaSeconds") ? Optional.of(view.get("etaSeconds").asLong()) : Optional.empty(),
                json(view.get("progress")), json(view.get("result")), artifacts,
                view.hasNonNull("reason") ? Optional.of(view.get("reason").asText()) : Optional.empty(),
                Instant.parse(required(view, "createdAt")), Instant.parse(required(view, "updatedAt")));
    }

    private static String required(JsonNode object, String field) {
        JsonNode value = object == null ? null : object.get(field);
        if (value == null || !value.isTextual()) {
            throw new IllegalArgumentException(field + " must be a string");
        }
        return value.asText();
    }

    private static Optional<JsonText> json(JsonNode value) {
        return value == null || value.isNull() ? Optional.empty() : Optional.of(jsonText(value));
    }

    public static ObjectNode subscription(Subscription subscription) {
        ObjectNode out = Json.object();
        out.put("topic", subscription.topic().value());
        out.put("node", subscription.node().value());
        out.put("createdAt", Json.time(subscription.createdAt()));
        return out;
    }

    public static ObjectNode publication(Publication publication) {
        ObjectNode out = Json.object();
        out.put("id", publication.id());
        out.put("delivered", publication.delivered());
        return out;
    }

    public static ObjectNode task(Task task) {
        ObjectNode out = Json.object();
        out.put("id", task.id());
        out.put("state", task.state().wire());
        out.put("creator", task.creator().value());
        out.put("assignee", task.assignee().value());
        out.put("title", task.title());
        out.set("input", raw(task.input()));
        out.put("ephemeral", task.ephemeral());
        out.put("etaSeconds", task.etaSeconds().orElse(null));
        out.set("progress", raw(task.progress()));
        out.set("result", raw(task.result()));
        var artifacts = out.putArray("artifacts");
        for (TaskEvent.Artifact artifact : task.artifacts()) {
            artifacts.addObject().put("uri", artifact.uri()).put("mediaType", artifact.mediaType());
        }
        out.put("reason", task.reason().orElse(null));
        out.put("createdAt", Json.time(task.createdAt()));
        out.put("updatedAt", Json.time(task.updatedAt()));
        return out;
    }

    /** A JSON value kept as text, embedded as a tree; absent is null. */
    /** {@code {"node": me, "items": [{"id","kind","parent","labels","route","grantId","reason"}]}}. */
    public static ObjectNode peers(Node self, List<Peers.Peer> reachable) {
        ObjectNode out = Json.object();
        out.put("node", self.id().value());
        var items = out.putArray("items");
        for (Peers.Peer peer : reachable) {
            ObjectNode item = items.addObject();
            item.put("id", peer.node().id().value());
            item.put("kind", peer.node().kind().wire());
            item.put("parent", peer.node().parent().map(NodeId::value).orElse(null));
            var labels = item.putObject("labels");
            peer.node().labels().forEach(labels::put);
            item.put("route", peer.route().wire());
            item.put("grantId", peer.grant().map(g -> g.id()).orElse(null));
            item.put("reason", peer.reason());
        }
        return out;
    }

    /** {@code {"items":[…],"next":seq}}: one page of an inbox. */
    public static ObjectNode inboxSummary(InboxSummary summary) {
        ObjectNode out = Json.object();
        out.put("node", summary.node().value());
        out.put("head", summary.head());
        out.put("backlog", summary.backlog());
        out.put("lastDeliveredAt", summary.lastDelivered().map(Json::time).orElse(null));
        return out;
    }

    public static ObjectNode inboxPage(Inboxes.Page page) {
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        page.items().forEach(e -> items.add(Json.envelopeTree(e)));
        out.put("next", page.next());
        return out;
    }

    private static JsonNode raw(Optional<JsonText> value) {
        try {
            return value.isPresent() ? Json.MAPPER.readTree(value.get().json()) : NullNode.getInstance();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored JSON text does not parse", e);
        }
    }

    private static JsonText jsonText(JsonNode tree) {
        return new JsonText(new String(Json.bytes(tree), StandardCharsets.UTF_8));
    }
}
