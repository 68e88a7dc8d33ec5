package dev.parley.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Humans in chat rooms (issue 13): a message an adapter hands in is let into its messaging
 * group or not ({@link Engagement#admit}), then reaches each agent wired to the group as its
 * own envelope, from the human node that speaks for the sender, through the one access
 * decision: one that engages the agent wakes it, one kept as context carries {@code trigger:
 * false} and never wakes it. Strangers are held for their group's approver; a room the bot is
 * called into unwired asks the hub's approver. Adapters hold no policy: they only hand events
 * in and carry envelopes out.
 */
public final class Chats {
    /** How the ids of the human nodes the hub makes for people in chat rooms begin (no node may take one). */
    public static final String HUMAN_PREFIX = "h-";
    /** Meta keys of the envelopes a chat message becomes. */
    public static final String TRIGGER = "trigger";
    public static final String PLATFORM = "chat.platform";
    public static final String ROOM = "chat.room";
    public static final String GROUP = "chat.group";
    public static final String MESSAGE_ID = "chat.message_id";
    public static final String USER = "chat.user";
    public static final String USER_NAME = "chat.user_name";
    public static final String SAID_AT = "chat.at";
    public static final String REPLY_TO = "chat.reply_to";
    public static final String REPLY_FROM = "chat.reply_from";
    public static final String QUOTE = "chat.quote";
    public static final String THREAD = "chat.thread";
    /** A card answered in chat: "approve <card> [agent …]", "reject <card>". */
    private static final java.util.regex.Pattern ANSWER = java.util.regex.Pattern.compile(
            "^\\s*(approve|reject|deny)\\s+([0-9a-f-]{36})((?:\\s+[a-z0-9][a-z0-9._-]{0,62})*)\\s*$");
    /** Most cards that may wait for an answer on this hub: past it, strangers and new rooms are turned away, and told why. */
    public static final int MAX_PENDING_CARDS = 1000;
    /** Longest quoted text an envelope carries. */
    private static final int MAX_QUOTE = 1000;
    /** The hub grants members their reach to wired agents. */
    private static final Principal HUB = new Principal.Admin();

    private final Graph graph;
    private final Registry registry;
    private final Router router;
    private final Messages messages;
    private final ChatStore store;
    private final EngagePatterns patterns;
    private final Function<ApprovalCard, Payload> cardNotice;
    private final Notices notices;
    private final EventStore audit;
    private final PolicyRules rules;
    private final InstantSource clock;
    private final IdGenerator ids;
    /** First contact (a new person's node, a new room's group) one at a time: two first messages make one of each. */
    private final Object firstContact = new Object();

    /**
     * {@code cardNotice}: the content of the envelope that brings a card to its approver, which
     * the hub sends from itself ({@code notices}: no access decision, the card is the hub's).
     */
    public Chats(Graph graph, Registry registry, Router router, Messages messages, ChatStore store, EngagePatterns patterns,
                 Function<ApprovalCard, Payload> cardNotice, Notices notices, EventStore audit,
                 PolicyRules rules, InstantSource clock, IdGenerator ids) {
        this.graph = graph;
        this.registry = registry;
        this.router = router;
        this.messages = messages;
        this.store = store;
        this.patterns = patterns;
        this.cardNotice = cardNotice;
        this.notices = notices;
        this.audit = audit;
        this.rules = rules;
        this.clock = clock;
        this.ids = ids;
    }

    /** What became of a chat message: per agent woken, kept as context, skipped; held for approval; or dropped with why. */
    public record Handled(List<NodeId> woken, List<NodeId> context, List<NodeId> skipped, List<NodeId> refused,
                          Optional<String> card, Optional<String> dropped) {
        public Handled {
            woken = List.copyOf(woken);
            context = List.copyOf(context);
            skipped = List.copyOf(skipped);
            refused = List.copyOf(refused);
        }

        static Handled dropped(String why) {
            return new Handled(List.of(), List.of(), List.of(), List.of(), Optional.empty(), Optional.of(why));
        }

        static Handled held(String card) {
            return new Handled(List.of(), List.of(), List.of(), List.of(), Optional.of(card), Optional.empty());
        }
    }

    /**
     * A chat message an adapter hands in (verified by the adapter: a signature, its own
     * connection). A card's approver answering it in chat ("approve CARD [agent …]",
     * "reject CARD") answers the card; anyone else saying so is just saying it.
     */
    public Handled inbound(ChatEvent event) {
        Optional<Handled> answered = answerInChat(event);
        if (answered.isPresent()) {
            return answered.get();
        }
        Optional<MessagingGroup> found = store.group(event.platform(), event.room());
        List<MessagingGroup.Wiring> wirings = found.map(g -> store.wirings(g.id())).orElse(List.of());
        if (found.isEmpty() || wirings.isEmpty()) {
            return unwired(event, found);
        }
        MessagingGroup group = found.get();
        Optional<NodeId> node = store.identity(event.platform(), event.user());
        Optional<Boolean> member = node.flatMap(n -> store.member(group.id(), n));
        Optional<NodeId> approver = group.approver().or(store::hubApprover);
        Engagement.Admission admission = Engagement.admit(group.unknownSenders(), member.orElse(false),
                store.pendingCard(group.id(), event.user()).isPresent(), approver);
        return switch (admission) {
            case Engagement.Admission.Out out -> drop(event, group.id(), out.why());
            case Engagement.Admission.Held held -> tooManyCards()
                    ? drop(event, group.id(), "an unknown sender, and " + MAX_PENDING_CARDS + " cards wait for an answer:"
                    + " turned away until fewer do")
                    : ask(new ApprovalCard(ids.next(), ApprovalCard.Kind.SENDER, group.id(), approver, event,
                    clock.instant()), "new sender " + event.userName() + " in " + group.name());
            case Engagement.Admission.In in -> deliver(group, wirings, event, in.known() || member.orElse(false),
                    member.isEmpty());
        };
    }

    /**
     * Answers a card: only its approver or the admin may (others: {@code forbidden}, audited).
     * A sender approved becomes a known member and its held message is delivered with the time it
     * was said; rejected, the message is dropped and nothing remembered. A room approved is wired
     * to {@code agents} with its kind's defaults, and who called the bot in is let in with their
     * message; rejected, it is not asked about again.
     */
    public Optional<Handled> answer(Principal caller, String cardId, ApprovalCard.Answer answer) {
        ApprovalCard card = store.card(cardId).orElseThrow(() -> new ParleyException(ErrorCode.CARD_NOT_FOUND,
                "card " + cardId + " is not pending"));
        Actor actor = Actor.of(caller, "chat.card", clock.instant());
        boolean mayAnswer = switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller c -> card.approver().equals(Optional.of(c.id()));
        };
        if (!mayAnswer) {
            audit.audit(actor.deny(cardId, "not the card's approver", rules.version()));
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the card's approver or the admin may answer card "
                    + cardId);
        }
        MessagingGroup group = store.group(card.groupId()).orElseThrow();
        String what = answer instanceof ApprovalCard.Answer.Approve ? "approved" : "rejected";
        AuditEntry entry = actor.allow(cardId, card.kind().wire() + " card " + what + " (" + card.held().userName()
                + " in " + group.name() + ")", Optional.empty(), rules.version(), Optional.empty());
        if (answer instanceof ApprovalCard.Answer.Approve approve && card.kind() == ApprovalCard.Kind.ROOM) {
            if (approve.agents().isEmpty()) {
                throw new ParleyException(ErrorCode.INVALID_REQUEST, "approving a room card names the agents to wire"
                        + " it to (agents: [node, …]; in chat: approve " + cardId + " AGENT …)");
            }
            approve.agents().forEach(this::requireNode);
        }
        if (!store.settle(cardId, entry)) { // answered meanwhile: only the first answer acts
            throw new ParleyException(ErrorCode.CARD_NOT_FOUND, "card " + cardId + " is not pending (answered already)");
        }
        return switch (card.kind()) {
            case SENDER -> {
                if (answer instanceof ApprovalCard.Answer.Reject) {
                    yield Optional.empty();
                }
                NodeId human = humanFor(card.held());
                store.addMember(group.id(), human, true, actor.at());
                List<MessagingGroup.Wiring> wirings = store.wirings(group.id());
                yield Optional.of(wirings.isEmpty() // unwired since the card was raised: a member now, no one to tell
                        ? drop(card.held(), group.id(), "approved, but the group has no wired agent now")
                        : deliver(group, wirings, card.held(), true, false));
            }
            case ROOM -> {
                if (answer instanceof ApprovalCard.Answer.Approve approve) {
                    for (NodeId agent : approve.agents()) {
                        store.wire(new MessagingGroup.Wiring(group.id(), agent, group.kind().defaultMode(),
                                group.kind().defaultMode() == Engagement.Mode.PATTERN ? Optional.of(".") : Optional.empty(),
                                Engagement.SenderScope.ALL, Engagement.Ignored.ACCUMULATE), actor.allow(group.id(),
                                "wired to " + agent + " with the defaults of a " + group.kind().wire() + " room",
                                Optional.empty(), rules.version(), Optional.empty()));
                    }
                    // who called the bot in is let in too: the approver saw the message on the card
                    store.addMember(group.id(), humanFor(card.held()), true, actor.at());
                    yield Optional.of(deliver(group, store.wirings(group.id()), card.held(), true, false));
                }
                store.putGroup(withDenied(group, actor.at()), actor.allow(group.id(), "room denied: not asked about"
                        + " again", Optional.empty(), rules.version(), Optional.empty()));
                yield Optional.empty();
            }
        };
    }

    /** Creates or replaces a messaging group's settings (the admin); the group keeps its id, a new one gets one. */
    public MessagingGroup putGroup(Principal caller, MessagingGroup group) {
        requireAdmin(caller, "set up messaging groups");
        group.approver().ifPresent(this::requireNode);
        Optional<MessagingGroup> before = store.group(group.platform(), group.room());
        MessagingGroup stored = new MessagingGroup(before.map(MessagingGroup::id).orElseGet(ids::next), group.platform(),
                group.room(), group.kind(), group.name(), group.unknownSenders(), group.approver(), group.deniedAt(),
                before.map(MessagingGroup::createdAt).orElse(clock.instant()));
        store.putGroup(stored, Actor.of(caller, "chat.group", clock.instant()).allow(stored.id(), "messaging group "
                + stored.platform() + "/" + stored.room() + " (" + stored.kind().wire() + ", unknown senders "
                + stored.unknownSenders().wire() + ")", Optional.empty(), rules.version(), Optional.empty()));
        return stored;
    }

    /** Wires an agent to a group (the admin); its pattern, if any, is compiled now, so a bad one is refused here. */
    public MessagingGroup.Wiring wire(Principal caller, MessagingGroup.Wiring wiring) {
        requireAdmin(caller, "wire messaging groups");
        store.group(wiring.groupId()).orElseThrow(() -> groupNotFound(wiring.groupId()));
        requireNode(wiring.agent());
        wiring.pattern().ifPresent(patterns::requireValid);
        store.wire(wiring, Actor.of(caller, "chat.wire", clock.instant()).allow(wiring.groupId(), "wired to "
                + wiring.agent() + " (" + wiring.mode().wire() + wiring.pattern().map(p -> " /" + p + "/").orElse("")
                + ", " + wiring.scope().wire() + ", " + wiring.ignored().wire() + ")", Optional.empty(), rules.version(),
                Optional.empty()));
        return wiring;
    }

    /** Adds a platform user to a group as a known member (the admin), with the human node that speaks for it. */
    public NodeId addMember(Principal caller, String groupId, String user, String userName, Optional<String> timeZone) {
        requireAdmin(caller, "add members");
        MessagingGroup group = store.group(groupId).orElseThrow(() -> groupNotFound(groupId));
        if (timeZone.isPresent() && !PromptFormat.zone(timeZone.get()).getId().equals(timeZone.get())) {
            throw new ParleyException(ErrorCode.INVALID_TIME_ZONE, "timeZone must be an IANA zone name such as"
                    + " Europe/Berlin, not '" + timeZone.get() + "'");
        }
        NodeId human = humanFor(group.platform(), user, userName, timeZone);
        store.addMember(group.id(), human, true, clock.instant());
        return human;
    }

    /**
     * Registers a platform (the admin) whose bridge signs what it hands in with {@code secret}
     * (16 to 256 characters, kept sealed) and, with {@code outboundUrl}, takes chat messages out
     * there, signed with the same secret.
     */
    public void putPlatform(Principal caller, String id, String secret, Optional<String> outboundUrl) {
        requireAdmin(caller, "register chat platforms");
        MessagingGroup.requireText("platform", id);
        if (secret.length() < 16 || secret.length() > 256) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "secret must be 16 to 256 characters");
        }
        outboundUrl.ifPresent(url -> Webhook.of(url, secret)); // an absolute http(s) URL, as any webhook's
        store.putPlatform(id, secret, outboundUrl, clock.instant(), Actor.of(caller, "chat.platform", clock.instant())
                .allow(id, "platform registered (its secret sealed)" + outboundUrl.map(u -> ", out at " + u).orElse(""),
                        Optional.empty(), rules.version(), Optional.empty()));
    }

    /**
     * Registers an IRC platform (the admin): the hub connects to its network as {@code irc.nick}
     * and joins its channels; its password, if any, is kept sealed. A bridge of the same id is replaced.
     */
    public ChatPlatform.Irc putIrc(Principal caller, String id, String server, boolean tls, String nick,
                                   List<String> channels, Optional<String> password) {
        requireAdmin(caller, "register chat platforms");
        ChatPlatform.Irc irc = ChatPlatform.Irc.of(id, server, tls, nick, channels, password);
        store.putIrc(irc, clock.instant(), Actor.of(caller, "chat.platform", clock.instant()).allow(irc.id(),
                "IRC platform registered: " + irc.server() + (irc.tls() ? " over TLS" : "") + " as " + irc.nick()
                        + " in " + String.join(", ", irc.channels()) + irc.password().map(p -> " (its password sealed)")
                        .orElse(""), Optional.empty(), rules.version(), Optional.empty()));
        return irc;
    }

    /** Every registered platform (the admin). */
    public List<ChatPlatform> platforms(Principal caller) {
        requireAdmin(caller, "list chat platforms");
        return store.platforms();
    }

    /** The IRC platforms: the hub connects to each when it starts. */
    public List<ChatPlatform.Irc> ircNetworks() {
        return store.platforms().stream().filter(p -> p instanceof ChatPlatform.Irc)
                .map(p -> (ChatPlatform.Irc) p).toList();
    }

    /** The platforms whose bridge takes chat messages out (the generic webhook adapter's). */
    public List<String> bridgedPlatforms() {
        return store.bridgedPlatforms();
    }

    /** Where a platform's bridge takes chat messages out, and the secret that signs them; empty without one. */
    public Optional<Webhook> platformOutbound(String id) {
        return store.platformOutbound(id).flatMap(url -> store.platformSecret(id).map(secret -> Webhook.of(url, secret)));
    }

    /**
     * A chat message to post: to the room (and thread) of the message it answers, else to the
     * user directly ({@code room} empty); what an agent marked {@code <internal>} left out.
     */
    public record Outbound(String envelopeId, NodeId human, String platform, Optional<String> room, String user,
                           Optional<String> thread, Optional<String> replyTo, String text, Optional<JsonText> card) {
    }

    /**
     * What envelope {@code envelope} becomes in chat, when its recipient is a human node that
     * speaks for a platform's user; empty for any other recipient.
     */
    public Optional<Outbound> outbound(Envelope envelope) {
        Optional<ChatStore.Identity> identity = store.identityOf(envelope.to());
        if (identity.isEmpty()) {
            return Optional.empty();
        }
        // The room of the message this answers: only one this person sent to this sender counts (a corrId is free text).
        Map<String, String> said = envelope.corrId().flatMap(audit::message).map(MessageRecord::envelope)
                .filter(original -> original.from().equals(envelope.to()) && original.to().equals(envelope.from()))
                .map(Envelope::meta).filter(meta -> identity.get().platform().equals(meta.get(PLATFORM)))
                .orElse(Map.of());
        boolean card = envelope.kind().equals(ApprovalCard.ENVELOPE_KIND);
        // The hub's other notices (a dead letter about a chat envelope) are not said in the room: nothing to post.
        String text = envelope.from().equals(NodeId.HUB) && !card ? "" : PromptFormat.visible(envelope.text().orElse(""));
        return Optional.of(new Outbound(envelope.id(), envelope.to(), identity.get().platform(),
                Optional.ofNullable(said.get(ROOM)), identity.get().user(),
                Optional.ofNullable(said.get(THREAD)), Optional.ofNullable(said.get(MESSAGE_ID)),
                text, card ? envelope.data() : Optional.empty()));
    }

    /** The envelopes to the humans of {@code platform} not yet posted (unacked), oldest first, at most {@code limit}. */
    public List<Outbound> unposted(String platform, int limit) {
        List<Outbound> out = new java.util.ArrayList<>();
        for (NodeId human : store.humans(platform)) {
            for (Envelope envelope : audit.unackedAfter(human, 0, limit - out.size())) {
                outbound(envelope).ifPresent(out::add);
            }
            if (out.size() >= limit) {
                break;
            }
        }
        return out;
    }

    /** The adapter posted it: the human's envelope is processed. */
    public void posted(Outbound message) {
        messages.ack(new Principal.Caller(message.human()), message.envelopeId(), new DeliveryEvent.Processed());
    }

    /** The platform refused it for good: the human's envelope fails with why. */
    public void refused(Outbound message, String why) {
        messages.ack(new Principal.Caller(message.human()), message.envelopeId(), new DeliveryEvent.Failed(why));
    }

    /**
     * The prompt of envelope {@code id} for its receiver ({@link PromptFormat}): for a chat
     * message, the newest {@code max} messages of its conversation up to it, context-only ones
     * included, times in the sender's zone (its node's {@code timezone} label, else UTC); for
     * any other envelope, that envelope alone.
     */
    public String prompt(Principal caller, String id, int max) {
        Messages.receiver(audit, caller, id, "read the prompt of");
        return prompt(audit.message(id).orElseThrow(() -> Messages.notFound(id)).envelope(), max);
    }

    /** {@link #prompt(Principal, String, int)} for the hub's own runner, which is the receiver. */
    public String prompt(Envelope envelope, int max) {
        if (max < 1 || max > PromptFormat.MAX_MESSAGES) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "maxMessagesPerPrompt must be 1 to "
                    + PromptFormat.MAX_MESSAGES);
        }
        List<Envelope> conversation = Optional.ofNullable(chat(envelope) ? envelope.meta().get(GROUP) : null)
                .map(group -> audit.conversation(envelope.to(), group, envelope.seq(), max).reversed())
                .orElse(List.of(envelope));
        String zone = graph.node(envelope.from()).map(n -> n.labels().get(PromptFormat.TIME_ZONE_LABEL)).orElse("UTC");
        return PromptFormat.prompt(conversation.stream().map(PromptFormat::line).toList(), zone == null ? "UTC" : zone);
    }

    /**
     * Whether an envelope is a chat message (its prompt is the conversation): chat meta counts
     * only on what a person of a chat room sent, through the hub — a node that writes such meta
     * on its own send is just sending meta.
     */
    public boolean chat(Envelope envelope) {
        return envelope.meta().containsKey(GROUP) && fromPerson(envelope);
    }

    /** A chat message kept for an agent as context only ({@code trigger: false}): it never wakes the agent or runs it. */
    public boolean contextOnly(Envelope envelope) {
        return "false".equals(envelope.meta().get(TRIGGER)) && fromPerson(envelope);
    }

    /** Sent by a human node the hub made for a chat user (no node may take an id of that shape). In memory: it runs on commits. */
    private boolean fromPerson(Envelope envelope) {
        return envelope.from().value().startsWith(HUMAN_PREFIX)
                && graph.node(envelope.from()).filter(n -> n.kind() == NodeKind.HUMAN).isPresent();
    }

    /** The signing secret of platform {@code id}; {@code unauthorized} for a platform not registered. */
    public String platformSecret(String id) {
        return store.platformSecret(id).orElseThrow(() -> new ParleyException(ErrorCode.UNAUTHORIZED,
                "platform " + id + " is not registered"));
    }

    /** The messaging groups and their wirings (the admin). */
    public List<MessagingGroup> groups(Principal caller) {
        requireAdmin(caller, "list messaging groups");
        return store.groups();
    }

    public List<MessagingGroup.Wiring> wirings(String groupId) {
        return store.wirings(groupId);
    }

    /** Unwires an agent from a group (the admin). */
    public void unwire(Principal caller, String groupId, NodeId agent) {
        requireAdmin(caller, "wire messaging groups");
        store.group(groupId).orElseThrow(() -> groupNotFound(groupId));
        store.unwire(groupId, agent, Actor.of(caller, "chat.unwire", clock.instant()).allow(groupId, "unwired "
                + agent, Optional.empty(), rules.version(), Optional.empty()));
    }

    /** Names the hub's approver (the admin): it answers cards of groups without their own and every room card. */
    public void hubApprover(Principal caller, Optional<NodeId> node) {
        requireAdmin(caller, "name the hub's approver");
        node.ifPresent(this::requireNode);
        store.hubApprover(node, Actor.of(caller, "chat.approver", clock.instant()).allow("hub", "approver "
                + node.map(NodeId::value).orElse("none"), Optional.empty(), rules.version(), Optional.empty()));
    }

    /** The pending cards: all for the admin, a node's own for it. */
    public List<ApprovalCard> cards(Principal caller) {
        return store.pendingCards().stream().filter(c -> switch (caller) {
            case Principal.Admin a -> true;
            case Principal.Caller n -> c.approver().equals(Optional.of(n.id()));
        }).toList();
    }

    private Optional<Handled> answerInChat(ChatEvent event) {
        java.util.regex.Matcher m = ANSWER.matcher(event.text());
        if (!m.matches()) {
            return Optional.empty();
        }
        Optional<NodeId> speaker = store.identity(event.platform(), event.user());
        Optional<ApprovalCard> card = store.card(m.group(2));
        if (speaker.isEmpty() || card.isEmpty() || !card.get().approver().equals(speaker)) {
            return Optional.empty();
        }
        ApprovalCard.Answer answer = m.group(1).equals("approve")
                ? new ApprovalCard.Answer.Approve(java.util.Arrays.stream(m.group(3).strip().split("\\s+"))
                .filter(s -> !s.isEmpty()).map(NodeId::of).toList())
                : new ApprovalCard.Answer.Reject();
        try {
            return Optional.of(answer(new Principal.Caller(speaker.get()), card.get().id(), answer)
                    .orElse(Handled.dropped("card " + card.get().id() + " rejected")));
        } catch (ParleyException e) { // said in chat: the answer is the reason, not an error for the adapter
            return Optional.of(Handled.dropped("card " + card.get().id() + " not answered: " + e.getMessage()));
        }
    }

    /** A message for the group's wired agents, from a sender the group let in. */
    private Handled deliver(MessagingGroup group, List<MessagingGroup.Wiring> wirings, ChatEvent event, boolean known,
                            boolean joins) {
        NodeId human = humanFor(event);
        if (joins) {
            store.addMember(group.id(), human, known, clock.instant()); // a passer-by of a public group
        }
        List<NodeId> woken = new java.util.ArrayList<>();
        List<NodeId> context = new java.util.ArrayList<>();
        List<NodeId> skipped = new java.util.ArrayList<>();
        List<NodeId> refused = new java.util.ArrayList<>();
        for (MessagingGroup.Wiring wiring : wirings) {
            boolean threadEngaged = event.thread().map(t -> store.engaged(group.id(), wiring.agent(), t)).orElse(false);
            Engagement.Outcome outcome = Engagement.engage(wiring.mode(), wiring.scope(), wiring.ignored(), known,
                    event.mentionsBot(), threadEngaged, () -> patterns.find(wiring.pattern().orElse("."), event.text()));
            if (outcome == Engagement.Outcome.SKIP) {
                skipped.add(wiring.agent());
                continue;
            }
            boolean wakes = outcome == Engagement.Outcome.WAKE;
            try { // one agent refused (a deny rule, a deleted node) keeps none of the others from the message
                reach(human, wiring.agent(), group);
                router.send(new Principal.Caller(human), new SendRequest(wiring.agent(), SendRequest.DEFAULT_KIND,
                        new Payload(Optional.of(event.text().isEmpty() ? " " : event.text()), Optional.empty(),
                                Optional.empty(), event.thread().map(Chats::threadToken), Optional.of(messageId(event,
                                wiring.agent())), meta(group, event, wakes)), Optional.empty(), Optional.empty()));
            } catch (ParleyException e) {
                if (e.code().status() >= 500) {
                    throw e; // the hub failing: the adapter hands it in again, and what went out is taken once
                }
                refused.add(wiring.agent()); // the refusal is audited where it was decided
                continue;
            }
            if (wakes) {
                woken.add(wiring.agent());
                if (wiring.mode() == Engagement.Mode.MENTION_STICKY && event.mentionsBot() && event.thread().isPresent()) {
                    store.engage(group.id(), wiring.agent(), event.thread().get());
                }
            } else {
                context.add(wiring.agent());
            }
        }
        return new Handled(woken, context, skipped, refused, Optional.empty(), Optional.empty());
    }

    /** The group's member may reach the agent wired to it: a grant, made once by the hub, audited. */
    private void reach(NodeId human, NodeId agent, MessagingGroup group) {
        if (graph.activeGrant(human, agent, clock.instant()).isEmpty()) {
            registry.grant(HUB, new NewGrant(human, new GrantTarget.Node(agent), Optional.empty(),
                    "member of messaging group " + group.platform() + "/" + group.room() + " wired to " + agent));
        }
    }

    private Handled unwired(ChatEvent event, Optional<MessagingGroup> found) {
        if (found.flatMap(MessagingGroup::deniedAt).isPresent()) {
            return drop(event, found.get().id(), "the room was denied: it is not asked about again");
        }
        if (event.roomKind() != Engagement.RoomKind.DM && !event.mentionsBot()) {
            return drop(event, found.map(MessagingGroup::id).orElse("-"), "an unwired room: only a mention or a DM asks"
                    + " to wire it");
        }
        Optional<NodeId> approver = store.hubApprover();
        if (approver.isEmpty()) {
            return drop(event, found.map(MessagingGroup::id).orElse("-"), "an unwired room and no hub approver to ask");
        }
        if (tooManyCards()) { // checked before the room is written down: a flood of new rooms leaves nothing behind
            return drop(event, found.map(MessagingGroup::id).orElse("-"), "an unwired room, and " + MAX_PENDING_CARDS
                    + " cards wait for an answer: turned away until fewer do");
        }
        MessagingGroup group;
        synchronized (firstContact) {
            group = store.group(event.platform(), event.room()).orElseGet(() -> {
                MessagingGroup created = new MessagingGroup(ids.next(), event.platform(), event.room(), event.roomKind(),
                        event.roomName(), Engagement.UnknownSenders.REQUEST_APPROVAL, Optional.empty(), Optional.empty(),
                        clock.instant());
                store.putGroup(created, new Actor("hub", "chat.group", clock.instant()).allow(created.id(),
                        "messaging group " + created.platform() + "/" + created.room() + " seen", Optional.empty(),
                        rules.version(), Optional.empty()));
                return created;
            });
        }
        if (store.pendingCard(group.id(), ROOM_SUBJECT).isPresent()) {
            return drop(event, group.id(), "an unwired room whose card is pending");
        }
        return ask(new ApprovalCard(ids.next(), ApprovalCard.Kind.ROOM, group.id(), approver, event, clock.instant()),
                "new room " + group.name() + " (" + group.platform() + ")");
    }

    /** What {@link ChatStore#pendingCard} keys a room card by: one per room. */
    public static final String ROOM_SUBJECT = "";

    private boolean tooManyCards() {
        return store.pendingCardCount() >= MAX_PENDING_CARDS;
    }

    private Handled ask(ApprovalCard card, String about) {
        AuditEntry entry = new Actor("hub", "chat.card", card.raisedAt()).allow(card.id(), card.kind().wire()
                + " card raised: " + about, Optional.empty(), rules.version(), Optional.empty());
        if (!store.raise(card, entry)) {
            return Handled.dropped("a card for this sender is pending"); // raised meanwhile by another message
        }
        card.approver().ifPresent(to -> audit.append(notices.approvalCard(to, cardNotice.apply(card), card.raisedAt()),
                new Actor("hub", "chat.card", card.raisedAt()).allow(to.value(), "card " + card.id() + " to its approver",
                        Optional.empty(), rules.version(), Optional.empty()), Optional.empty(), Optional.empty()));
        return Handled.held(card.id());
    }

    private Handled drop(ChatEvent event, String groupId, String why) {
        audit.audit(new Actor("hub", "chat.inbound", clock.instant()).deny(event.platform() + "/" + event.room(),
                why + " (" + event.userName() + ", message " + event.messageId() + ")", rules.version()));
        return Handled.dropped(why);
    }

    private NodeId humanFor(ChatEvent event) {
        return humanFor(event.platform(), event.user(), event.userName(), event.userTimeZone());
    }

    /**
     * The human node that speaks for a platform's user, created (kind {@code human}, a root, by
     * the hub) the first time: {@code h-<name>-<hash>}, the hash telling apart users whose
     * names read alike.
     */
    private NodeId humanFor(String platform, String user, String userName, Optional<String> timeZone) {
        Optional<NodeId> known = store.identity(platform, user);
        if (known.isPresent()) {
            return known.get();
        }
        synchronized (firstContact) {
            return store.identity(platform, user).orElseGet(() -> newHuman(platform, user, userName, timeZone));
        }
    }

    private NodeId newHuman(String platform, String user, String userName, Optional<String> timeZone) {
        String name = userName.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("(^-+|-+$)", "");
        String base = HUMAN_PREFIX + (name.isEmpty() ? "user" : name.substring(0, Math.min(40, name.length()))) + "-"
                + hash(platform + "\n" + user).substring(0, 8);
        // Always a new node: one that exists already (made for another user, or by an admin) is never bound to this one.
        NodeId id = new NodeId(base);
        for (int n = 2; graph.node(id).isPresent() || graph.isRetired(id); n++) {
            id = new NodeId(base + "-" + n);
        }
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("chat.platform", platform);
        labels.put("chat.user", user);
        labels.put("a2a.name", userName);
        timeZone.ifPresent(zone -> labels.put(PromptFormat.TIME_ZONE_LABEL, zone)); // agents see times in it
        registry.create(HUB, new NewNode(id, NodeKind.HUMAN, Optional.empty(), labels));
        store.bindIdentity(platform, user, id);
        return id;
    }

    private static Map<String, String> meta(MessagingGroup group, ChatEvent event, boolean wakes) {
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put(TRIGGER, String.valueOf(wakes));
        meta.put(PLATFORM, event.platform());
        meta.put(ROOM, event.room());
        meta.put(GROUP, group.id());
        meta.put(MESSAGE_ID, event.messageId());
        meta.put(USER, event.user());
        meta.put(USER_NAME, event.userName());
        meta.put(SAID_AT, event.at().toString());
        event.thread().ifPresent(t -> meta.put(THREAD, t));
        event.replyTo().ifPresent(r -> {
            meta.put(REPLY_TO, r.messageId());
            meta.put(REPLY_FROM, r.from());
            meta.put(QUOTE, r.text().length() > MAX_QUOTE ? r.text().substring(0, MAX_QUOTE) : r.text());
        });
        return meta;
    }

    /** One envelope per message and agent: a message handed in twice is taken once (the store dedupes by messageId). */
    private static String messageId(ChatEvent event, NodeId agent) {
        return "chat-" + hash(event.platform() + "\n" + event.room() + "\n" + event.messageId() + "\n" + agent);
    }

    /** A platform's thread id as a thread token (printable ASCII without spaces, at most 200). */
    private static String threadToken(String thread) {
        return VisibleAscii.within(thread, 200) ? thread : "chat-" + hash(thread);
    }

    private static String hash(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(
                    StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    private static MessagingGroup withDenied(MessagingGroup group, Instant at) {
        return new MessagingGroup(group.id(), group.platform(), group.room(), group.kind(), group.name(),
                group.unknownSenders(), group.approver(), Optional.of(at), group.createdAt());
    }

    private void requireNode(NodeId id) {
        if (graph.node(id).isEmpty()) {
            throw Registry.notFound(id);
        }
    }

    private static void requireAdmin(Principal caller, String what) {
        if (!(caller instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may " + what);
        }
    }

    private static ParleyException groupNotFound(String id) {
        return new ParleyException(ErrorCode.GROUP_NOT_FOUND, "messaging group " + id + " does not exist");
    }
}
