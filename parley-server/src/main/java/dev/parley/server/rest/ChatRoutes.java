package dev.parley.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.ApprovalCard;
import dev.parley.core.ChatEvent;
import dev.parley.core.ChatPlatform;
import dev.parley.core.Chats;
import dev.parley.core.Engagement;
import dev.parley.core.ErrorCode;
import dev.parley.core.MessagingGroup;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.PromptFormat;
import dev.parley.core.WebhookSignature;
import dev.parley.server.chat.ChatOutbox;
import dev.parley.server.http.Body;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;
import dev.parley.server.wire.Json;
import dev.parley.server.wire.Views;

import java.time.Instant;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code /v1/chat}: chat platforms (the admin: a bridge's webhook, or an IRC network the hub
 * connects to), messaging groups and their wirings (the admin), approval cards (their
 * approvers), and the generic chat webhook adapter: a bridge (Slack, Telegram, Discord, …)
 * hands chat messages in as signed JSON. The adapter holds no policy: it verifies the
 * signature and hands the event to {@link Chats}.
 */
public final class ChatRoutes {
    private final Chats chats;
    private final ChatOutbox outbox;

    public ChatRoutes(Chats chats, ChatOutbox outbox) {
        this.chats = chats;
        this.outbox = outbox;
    }

    public void register(Routes routes) {
        routes.put("/v1/chat/platforms/{platform}", this::putPlatform)
                .get("/v1/chat/platforms", this::platforms)
                .post("/v1/chat/inbound/{platform}", this::inbound)
                .put("/v1/chat/groups", this::putGroup)
                .get("/v1/chat/groups", this::groups)
                .put("/v1/chat/groups/{gid}/wirings/{agent}", this::wire)
                .delete("/v1/chat/groups/{gid}/wirings/{agent}", this::unwire)
                .post("/v1/chat/groups/{gid}/members", this::addMember)
                .put("/v1/chat/approver", this::approver)
                .get("/v1/chat/cards", this::cards)
                .post("/v1/chat/cards/{cid}/answer", this::answer)
                .get("/v1/messages/{mid}/prompt", this::prompt);
    }

    /**
     * The prompt an envelope's receiver (an agent's runner) gives its agent: a chat message's
     * conversation formatted for agents, the newest {@code max} (default 10) messages up to it.
     */
    private void prompt(Exchange ex) {
        var caller = ex.caller();
        int max = (int) ex.longQuery("max", 1, PromptFormat.MAX_MESSAGES, ErrorCode.INVALID_REQUEST)
                .orElse(PromptFormat.DEFAULT_MAX_MESSAGES);
        ex.json(200, Json.object().put("id", ex.path("mid")).put("prompt", chats.prompt(caller, ex.path("mid"), max)));
    }

    /**
     * A bridge ({@code secret}, {@code outboundUrl}) or an IRC network ({@code irc: {server,
     * nick, channels, tls, password}}) the hub connects to at once, and again whenever it starts.
     */
    private void putPlatform(Exchange ex) {
        Body body = ex.body();
        String id = ex.path("platform");
        Optional<Body> irc = body.object("irc");
        if (irc.isPresent()) {
            if (body.json().has("secret") || body.json().has("outboundUrl")) {
                throw Body.invalid("a platform is a bridge (secret, outboundUrl) or an IRC network (irc), not both");
            }
            Body network = irc.get();
            outbox.follow(chats.putIrc(ex.caller(), id, network.requiredString("server"),
                    network.bool("tls").orElse(false), network.requiredString("nick"), network.strings("channels"),
                    network.string("password")));
        } else {
            Optional<String> outboundUrl = body.string("outboundUrl");
            chats.putPlatform(ex.caller(), id, body.requiredString("secret"), outboundUrl);
            outbox.follow(new ChatPlatform.Bridge(id, outboundUrl));
        }
        ex.noContent();
    }

    private void platforms(Exchange ex) {
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        chats.platforms(ex.caller()).forEach(p -> items.add(Views.chatPlatform(p, outbox.connected(p.id()))));
        ex.json(200, out);
    }

    /**
     * A chat message from a bridge, authenticated by its {@code Parley-Signature} (HMAC-SHA256
     * of the body with the platform's secret) instead of a bearer token. A message id handed in
     * again is taken once, so a bridge may retry freely.
     */
    private void inbound(Exchange ex) {
        String platform = ex.path("platform");
        byte[] raw = ex.rawBody();
        Optional<String> secret;
        try {
            secret = Optional.of(chats.platformSecret(platform));
        } catch (ParleyException e) {
            secret = Optional.empty();
        }
        if (secret.isEmpty() || !WebhookSignature.verify(secret.get(), raw, ex.header(WebhookSignature.HEADER)
                .orElse(null))) { // an unknown platform and a bad signature answer alike
            throw new ParleyException(ErrorCode.UNAUTHORIZED, "the " + WebhookSignature.HEADER + " header does not"
                    + " sign this body with platform " + platform + "'s secret");
        }
        Body body = Body.parse(raw);
        Optional<Body> reply = body.object("replyTo");
        ChatEvent event = new ChatEvent(platform, body.requiredString("room"),
                choice(body.string("roomKind").orElse("group"), Engagement.RoomKind.values(), "roomKind"),
                body.string("roomName").orElse(""), body.requiredString("user"), body.string("userName").orElse(""),
                body.requiredString("messageId"), body.requiredString("text"), body.bool("mentionsBot").orElse(false),
                body.string("thread"), reply.map(r -> new ChatEvent.Reply(r.requiredString("messageId"),
                r.string("from").orElse(""), r.string("text").orElse(""))),
                body.instant("at").orElse(Instant.now()), body.string("userTimeZone"));
        ex.json(200, Views.handled(outbox.hear(event)));
    }

    private void putGroup(Exchange ex) {
        Body body = ex.body();
        String platform = body.requiredString("platform");
        String room = body.requiredString("room");
        MessagingGroup group = chats.putGroup(ex.caller(), new MessagingGroup(platform + "/" + room, platform, room,
                choice(body.requiredString("kind"), Engagement.RoomKind.values(), "kind"),
                body.string("name").orElse(room),
                choice(body.string("unknownSenderPolicy").orElse("request_approval"), Engagement.UnknownSenders.values(),
                        "unknownSenderPolicy"), body.nodeId("approver"), Optional.empty(), Instant.EPOCH));
        ex.json(200, Views.messagingGroup(group, chats.wirings(group.id())));
    }

    private void groups(Exchange ex) {
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        chats.groups(ex.caller()).forEach(g -> items.add(Views.messagingGroup(g, chats.wirings(g.id()))));
        ex.json(200, out);
    }

    /** A wiring; what the request leaves out takes the group kind's default (DM: pattern '.'; threaded: mention-sticky; other: mention). */
    private void wire(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        MessagingGroup group = chats.groups(caller).stream().filter(g -> g.id().equals(ex.path("gid"))).findFirst()
                .orElseThrow(() -> new ParleyException(ErrorCode.GROUP_NOT_FOUND, "messaging group " + ex.path("gid")
                        + " does not exist"));
        Engagement.Mode mode = body.string("engageMode").map(m -> choice(m, Engagement.Mode.values(), "engageMode"))
                .orElse(group.kind().defaultMode());
        Optional<String> pattern = body.string("engagePattern")
                .or(() -> mode == Engagement.Mode.PATTERN ? Optional.of(".") : Optional.empty());
        MessagingGroup.Wiring wiring = chats.wire(caller, new MessagingGroup.Wiring(group.id(), NodeId.of(ex.path("agent")),
                mode, pattern, choice(body.string("senderScope").orElse("all"), Engagement.SenderScope.values(),
                "senderScope"), choice(body.string("ignoredMessagePolicy").orElse("accumulate"),
                Engagement.Ignored.values(), "ignoredMessagePolicy")));
        ex.json(200, Views.wiring(wiring));
    }

    private void unwire(Exchange ex) {
        chats.unwire(ex.caller(), ex.path("gid"), NodeId.of(ex.path("agent")));
        ex.noContent();
    }

    private void addMember(Exchange ex) {
        Body body = ex.body();
        String user = body.requiredString("user");
        NodeId node = chats.addMember(ex.caller(), ex.path("gid"), user, body.string("userName").orElse(user),
                body.string("timeZone"));
        ex.json(200, Json.object().put("node", node.value()));
    }

    private void approver(Exchange ex) {
        chats.hubApprover(ex.caller(), ex.body().nodeId("node"));
        ex.noContent();
    }

    private void cards(Exchange ex) {
        ObjectNode out = Json.object();
        var items = out.putArray("items");
        chats.cards(ex.caller()).forEach(c -> items.add(Views.approvalCard(c)));
        ex.json(200, out);
    }

    private void answer(Exchange ex) {
        var caller = ex.caller();
        Body body = ex.body();
        ApprovalCard.Answer answer = switch (body.requiredString("decision")) {
            case "approve" -> new ApprovalCard.Answer.Approve(body.strings("agents").stream().map(NodeId::of).toList());
            case "reject", "deny" -> new ApprovalCard.Answer.Reject();
            default -> throw Body.invalid("decision must be approve or reject");
        };
        ObjectNode out = Json.object().put("card", ex.path("cid")).put("decision", answer instanceof
                ApprovalCard.Answer.Approve ? "approved" : "rejected");
        chats.answer(caller, ex.path("cid"), answer).ifPresent(h -> out.set("delivered", Views.handled(h)));
        ex.json(200, out);
    }

    /** The constant of {@code values} whose wire form ({@code -} or {@code _} between words) is {@code text}. */
    private static <E extends Enum<E>> E choice(String text, E[] values, String field) {
        String wanted = text.toLowerCase(Locale.ROOT).replace('-', '_');
        for (E value : values) {
            if (value.name().toLowerCase(Locale.ROOT).equals(wanted)) {
                return value;
            }
        }
        throw Body.invalid(field + " must be one of " + String.join(", ", java.util.Arrays.stream(values)
                .map(v -> v.name().toLowerCase(Locale.ROOT).replace('_', '-')).toList()) + ", not '" + text + "'");
    }
}
