package dev.parley.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Appended;
import dev.parley.core.Claims;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.Messages;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Payload;
import dev.parley.core.Router;
import dev.parley.core.ScheduleRequest;
import dev.parley.core.Schedules;
import dev.parley.core.SendOutcome;
import dev.parley.core.SendRequest;
import dev.parley.server.delivery.MessageFlow;
import dev.parley.server.delivery.ReplyWaiters;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.RequestLimiter;
import dev.parley.server.http.Routes;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * {@code /v1/messages}: send (now, or later with {@code deliverAt} or {@code cron}: a schedule),
 * send many at once ({@code :batch}), status, claim, heartbeat, ack and reply; and the live flow of what
 * is committed, as SSE.
 */
public final class MessageRoutes {
    /** Envelope ids are UUIDs; anything else cannot name a message. */
    private static final Pattern MESSAGE_ID = Pattern.compile("^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$");

    /** The longest a sender may hold its call open for a reply. */
    private static final long MAX_WAIT_MS = 300_000;

    /** The most messages one batch carries. */
    public static final int MAX_BATCH = 1_000;
    /** A batch's body may be this many times the hub's body limit (4 MiB by default); each message in it, the limit itself. */
    public static final int BATCH_BODY_FACTOR = 16;

    private final Router router;
    private final Messages messages;
    private final Claims claims;
    private final ReplyWaiters waiters;
    private final Metrics metrics;
    private final Schedules schedules;
    private final MessageFlow flow;
    private final RequestLimiter limiter;

    public MessageRoutes(Router router, Schedules schedules, Messages messages, Claims claims, ReplyWaiters waiters,
                         Metrics metrics, RequestLimiter limiter, MessageFlow flow) {
        this.flow = flow;
        this.router = router;
        this.limiter = limiter;
        this.schedules = schedules;
        this.messages = messages;
        this.claims = claims;
        this.waiters = waiters;
        this.metrics = metrics;
    }

    public void register(Routes routes) {
        routes.post("/v1/messages", this::send)
                .get("/v1/messages/stream", this::flow) // before {mid}: the first matching route wins
                .post("/v1/messages:batch", this::sendBatch)
                .get("/v1/messages/{mid}", this::status)
                .post("/v1/messages/{mid}/claim", this::claim)
                .post("/v1/messages/{mid}/heartbeat", this::heartbeat)
                .post("/v1/messages/{mid}/ack", this::ack)
                .post("/v1/messages/{mid}/reply", this::reply);
    }

    private void send(Exchange ex) throws InterruptedException {
        var caller = ex.caller();
        Body body = ex.body();
        SendRequest request = request(body);
        boolean requiresReply = body.bool("requiresReply").orElse(false);
        OptionalLong wait = ex.longQuery("wait", 1, MAX_WAIT_MS, ErrorCode.INVALID_REQUEST);
        Optional<String> deliverAt = body.string("deliverAt");
        Optional<String> cron = body.string("cron");
        Optional<String> timeZone = body.string("timeZone");
        if (deliverAt.isPresent() || cron.isPresent() || timeZone.isPresent()) {
            if (wait.isPresent()) {
                throw Body.invalid("?wait= holds the call for a reply; a scheduled send is not sent yet");
            }
            Schedules.Created created = metrics.refusalsCounted(() -> schedules.create(caller,
                    new ScheduleRequest(request, deliverAt, cron, timeZone)));
            ex.json(created.duplicate() ? 200 : 202, Views.schedule(created.schedule(), created.duplicate()));
            return;
        }
        if (wait.isPresent() && !requiresReply) {
            throw Body.invalid("?wait= holds the call for a reply: the send must say \"requiresReply\": true");
        }
        Appended appended = metrics.send(() -> router.send(caller, request));
        if (wait.isEmpty()) {
            answer(ex, appended);
            return;
        }
        Optional<Envelope> reply = waiters.await(appended.envelope().id(), Duration.ofMillis(wait.getAsLong()));
        if (reply.isEmpty()) {
            throw new ParleyException(ErrorCode.REPLY_TIMEOUT, "no reply within " + wait.getAsLong()
                    + " ms; the request stays accepted", Map.of("id", appended.envelope().id()));
        }
        ObjectNode out = Json.object();
        out.set("request", Views.accepted(appended));
        out.set("reply", Json.envelopeTree(reply.get()));
        ex.json(200, out);
    }

    /** Every envelope committed from now on that the caller may see, until it leaves or its token stops working. */
    private void flow(Exchange ex) {
        var caller = ex.caller();
        ex.goOnAlone(alone -> flow.serve(caller, () -> alone.authenticate().equals(Optional.of(caller)), alone));
    }

    /**
     * Up to {@link #MAX_BATCH} sends in one commit: {@code {"messages": [<send body>, …]}}.
     * A body that cannot be read as such (not an array, empty, too many, a message that is not
     * a valid send or asks for a schedule) is refused whole with nothing written. Otherwise
     * the answer is 200 with one result per message: each is decided, audited and counted
     * against the rate limit (one token per message) as a single send, and fails by itself;
     * the others commit together.
     */
    private void sendBatch(Exchange ex) {
        var caller = ex.caller();
        if (ex.query("wait").isPresent()) {
            throw Body.invalid("?wait= holds one send's call for its reply; a batch does not wait");
        }
        JsonNode messages = ex.body(ex.maxBodyBytes() * BATCH_BODY_FACTOR).json().get("messages");
        if (messages == null || !messages.isArray()) {
            throw Body.invalid("field 'messages' must be an array of messages, each the body of a send");
        }
        if (messages.isEmpty() || messages.size() > MAX_BATCH) {
            throw Body.invalid("a batch carries 1 to " + MAX_BATCH + " messages; this one has " + messages.size());
        }
        List<SendRequest> requests = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            try {
                requests.add(batched(messages.get(i), ex.maxBodyBytes()));
            } catch (ParleyException e) {
                throw new ParleyException(e.code(), "messages[" + i + "]: " + e.getMessage(), e.details());
            }
        }
        RequestLimiter.Admitted admitted = limiter.admitMore(caller, requests.size() - 1);
        List<SendOutcome> outcomes = new ArrayList<>(requests.size());
        outcomes.addAll(metrics.batch(router.sendAll(caller, requests.subList(0, 1 + admitted.count()))));
        admitted.refusal().ifPresent(overRate -> outcomes.addAll(
                Collections.nCopies(requests.size() - outcomes.size(), new SendOutcome.Refused(overRate))));
        ex.json(200, Views.batch(outcomes));
    }

    /** One message of a batch: a send's body, sent now, no larger than a single send's. */
    private static SendRequest batched(JsonNode message, long maxBytes) {
        if (!(message instanceof ObjectNode object)) {
            throw Body.invalid("each message must be a JSON object");
        }
        if (Json.bytes(object).length > maxBytes) {
            throw new ParleyException(ErrorCode.PAYLOAD_TOO_LARGE, "the message is larger than the limit of "
                    + maxBytes + " bytes");
        }
        for (String later : List.of("deliverAt", "cron", "timeZone")) {
            if (object.has(later)) {
                throw Body.invalid("a batch sends now; '" + later + "' belongs to a single POST /v1/messages");
            }
        }
        return request(new Body(object));
    }

    private static SendRequest request(Body body) {
        return new SendRequest(NodeId.of(body.requiredString("to")),
                body.string("kind").orElse(SendRequest.DEFAULT_KIND), payload(body, body.token("corrId")),
                body.string("from"), body.longValue("replyWithinMs").map(Duration::ofMillis));
    }

    private void status(Exchange ex) {
        var caller = ex.caller();
        var record = messages.status(caller, messageId(ex));
        ex.json(200, Views.message(record, claims.held(record.envelope().id())));
    }

    private void claim(Exchange ex) {
        var caller = ex.caller();
        String id = messageId(ex);
        ex.json(200, Views.claim(claims.claim(caller, id, declared(ex.body(), "timeoutMs"))));
    }

    private void heartbeat(Exchange ex) {
        var caller = ex.caller();
        String id = messageId(ex);
        Body body = ex.body();
        ex.json(200, Views.claim(claims.heartbeat(caller, id, body.string("tool"), body.instant("toolStartedAt"),
                declared(body, "toolTimeoutMs"))));
    }

    private static Optional<Duration> declared(Body body, String field) {
        return body.longValue(field).map(ms -> {
            if (ms < 1 || ms > Claims.MAX_DECLARED.toMillis()) {
                throw Body.invalid(field + " must be between 1 and " + Claims.MAX_DECLARED.toMillis());
            }
            return Duration.ofMillis(ms);
        });
    }

    private void ack(Exchange ex) {
        var caller = ex.caller();
        String id = messageId(ex);
        Body body = ex.body();
        String status = body.requiredString("status");
        DeliveryEvent event = switch (status) {
            case "processed" -> new DeliveryEvent.Processed();
            case "failed" -> new DeliveryEvent.Failed(body.string("reason").orElse(""));
            default -> throw Body.invalid("status must be processed or failed");
        };
        ObjectNode out = Json.object();
        out.put("id", id);
        out.put("state", messages.ack(caller, id, event).wire());
        ex.json(200, out);
    }

    private void reply(Exchange ex) {
        var caller = ex.caller();
        String id = messageId(ex);
        Body body = ex.body();
        Payload payload = payload(body, Optional.empty());
        answer(ex, metrics.send(() -> router.reply(caller, id, payload)));
    }

    private static Payload payload(Body body, Optional<String> corrId) {
        return new Payload(body.string("text"), body.rawJson("data"), corrId, body.token("threadId"),
                body.token("messageId"), body.stringMap("meta"));
    }

    private static void answer(Exchange ex, Appended appended) {
        ex.json(appended.duplicate() ? 200 : 202, Views.accepted(appended));
    }

    private static String messageId(Exchange ex) {
        String id = ex.path("mid");
        if (!MESSAGE_ID.matcher(id).matches()) {
            throw new ParleyException(ErrorCode.MESSAGE_NOT_FOUND, "message " + id + " does not exist");
        }
        return id;
    }
}
