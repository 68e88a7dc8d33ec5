package dev.parley.server.chat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.WebhookSignature;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.sun.net.httpserver.HttpServer;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static dev.parley.server.it.HubFixture.JSON;
import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Humans in chat rooms through the generic chat webhook adapter, on a real hub with real
 * agents: a bridge hands signed chat messages in; a stranger is held and a card goes to the
 * group's approver; approved, the held message reaches the wired agents (one woken by the
 * mention, one keeping it as context) and the agent's answer reaches the human's node; a
 * retried message is taken once; an unwired DM asks the hub's approver to wire the room.
 */
class ChatWebhookTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String SECRET = "bridge-secret-0123456789";

    @TempDir
    Path tmp;

    private static HubFixture.Resp inbound(HubFixture hub, String platform, ObjectNode event, String secret) {
        byte[] body = event.toString().getBytes(StandardCharsets.UTF_8);
        return hub.request("POST", "/v1/chat/inbound/" + platform, null, body, Map.of("Content-Type",
                "application/json", WebhookSignature.HEADER, WebhookSignature.sign(secret, body)));
    }

    /** The platform's bridge: takes the hub's chat messages out, checking each signature. */
    private static final class Bridge implements AutoCloseable {
        final List<JsonNode> posts = new java.util.concurrent.CopyOnWriteArrayList<>();
        final HttpServer server;

        Bridge() throws java.io.IOException {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/out", exchange -> {
                byte[] body = exchange.getRequestBody().readAllBytes();
                boolean signed = WebhookSignature.verify(SECRET, body, exchange.getRequestHeaders()
                        .getFirst(WebhookSignature.HEADER));
                if (signed) {
                    posts.add(JSON.readTree(body));
                }
                exchange.sendResponseHeaders(signed ? 204 : 401, -1);
                exchange.close();
            });
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/out";
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }

    private static ObjectNode said(String user, String messageId, String text, boolean mention) {
        return obj("room", "C1", "roomKind", "group", "roomName", "#dev", "user", user, "userName", "Ann " + user,
                "messageId", messageId, "text", text, "mentionsBot", mention, "at", "2026-01-05T09:30:00Z",
                "userTimeZone", "America/New_York");
    }

    @Test
    void aStrangerIsHeldApprovedAndHeardAndTheAgentsAnswerIsPostedBackIntoTheRoom() throws Exception {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub")); Bridge bridge = new Bridge()) {
            String ops = hub.createNode("ops", null);
            String other = hub.createNode("other", null);
            for (String spec : List.of("id: upper\ncommand: [sh, -c, \"tr a-z A-Z\"]\n",
                    "id: listener\ncommand: [sh, -c, \"printf '<internal>note to self</internal>heard: '; cat\"]\n")) {
                assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", spec)).status());
            }
            assertError(hub.put(ops, "/v1/chat/platforms/slack", obj("secret", SECRET)), 403, "forbidden");
            assertError(hub.put(hub.admin(), "/v1/chat/platforms/slack", obj("secret", "short")), 400, "invalid_request");
            assertError(hub.put(hub.admin(), "/v1/chat/platforms/slack", obj("secret", SECRET, "outboundUrl", "ftp://x")),
                    400, "invalid_request");
            assertEquals(204, hub.put(hub.admin(), "/v1/chat/platforms/slack", obj("secret", SECRET,
                    "outboundUrl", bridge.url())).status());
            JsonNode group = hub.put(hub.admin(), "/v1/chat/groups", obj("platform", "slack", "room", "C1", "kind", "group",
                    "name", "#dev", "approver", "ops")).json();
            String gid = group.get("id").asText();
            assertEquals("request-approval", group.get("unknownSenderPolicy").asText());
            JsonNode upper = hub.put(hub.admin(), "/v1/chat/groups/" + gid + "/wirings/upper", obj()).json();
            assertEquals(List.of("mention", "all", "accumulate"), List.of(upper.get("engageMode").asText(),
                    upper.get("senderScope").asText(), upper.get("ignoredMessagePolicy").asText()), "a group's defaults");
            assertTrue(assertError(hub.put(hub.admin(), "/v1/chat/groups/" + gid + "/wirings/listener",
                    obj("engageMode", "pattern", "engagePattern", "deploy(")), 400, "invalid_request").body()
                    .contains("not a regular expression"));
            assertEquals(200, hub.put(hub.admin(), "/v1/chat/groups/" + gid + "/wirings/listener",
                    obj("engageMode", "pattern", "engagePattern", "\\bdeploy\\b")).status());

            // Forged or unsigned: refused alike, nothing taken.
            assertError(inbound(hub, "slack", said("U1", "m0", "hi", true), "not-the-secret-at-all"), 401, "unauthorized");
            assertError(inbound(hub, "teams", said("U1", "m0", "hi", true), SECRET), 401, "unauthorized");
            assertError(inbound(hub, "slack", said("U1", "m0", "x".repeat(17_000), true), SECRET), 413,
                    "payload_too_large");

            // A stranger: held, one card to the approver; a second message while it is pending is dropped.
            JsonNode held = inbound(hub, "slack", said("U1", "m1", "hello @bot", true), SECRET).json();
            assertEquals("held", held.get("outcome").asText(), held::toString);
            String card = held.get("card").asText();
            assertEquals("dropped", inbound(hub, "slack", said("U1", "m2", "anyone?", true), SECRET).json()
                    .get("outcome").asText());
            JsonNode listed = hub.get(ops, "/v1/chat/cards").items().getFirst();
            assertEquals(List.of(card, "New sender", "hello @bot"), List.of(listed.get("id").asText(),
                    listed.get("title").asText(), listed.get("text").asText()));
            JsonNode notice = hub.inbox(ops).stream().filter(e -> e.get("kind").asText().equals("approval_card"))
                    .findFirst().orElseThrow();
            assertTrue(notice.get("text").asText().contains("New sender Ann U1 in #dev"), notice::toString);
            assertEquals(List.of(), hub.get(other, "/v1/chat/cards").items(), "another node sees no card");
            assertError(hub.post(other, "/v1/chat/cards/" + card + "/answer", obj("decision", "approve")), 403, "forbidden");
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=chat.card&decision=deny").body().contains(card));

            // Approved: a known member; the held message reaches both agents, said when it was said.
            JsonNode approved = hub.post(ops, "/v1/chat/cards/" + card + "/answer", obj("decision", "approve")).json();
            assertError(hub.post(ops, "/v1/chat/cards/" + card + "/answer", obj("decision", "reject")), 404,
                    "card_not_found"); // a card acts once
            assertEquals("upper", approved.at("/delivered/woken/0").asText(), approved::toString);
            assertEquals("listener", approved.at("/delivered/context/0").asText());
            String human = hub.get(hub.admin(), "/v1/nodes").items().stream().map(n -> n.get("id").asText())
                    .filter(id -> id.startsWith("h-ann-u1-")).findFirst().orElseThrow();
            assertEquals("human", hub.get(hub.admin(), "/v1/nodes/" + human).text("kind"));
            // The answer is posted back into the room, as a reply to the message, by the bridge.
            // The agent's turn read the message formatted for agents (its command upper-cases what it reads).
            await().atMost(WAIT).until(() -> bridge.posts.size() == 1);
            JsonNode posted = bridge.posts.getFirst();
            // Her times in her own zone: the platform said she is in New York.
            String firstTurn = """
                    <context timezone="America/New_York"/>
                    <messages>
                    <message id="m1" from="%s" sender="Ann U1" time="Jan 5, 2026, 4:30 AM">hello @bot</message>
                    </messages>""".formatted(human).toUpperCase(java.util.Locale.ROOT);
            assertEquals(List.of("slack", "C1", "U1", "m1", firstTurn), List.of(posted.get("platform").asText(),
                    posted.get("room").asText(), posted.get("user").asText(), posted.get("replyTo").asText(),
                    posted.get("text").asText()), posted::toString);

            // The bridge retries m1: taken once. Then "deploy" wakes the listener, not upper (no mention).
            inbound(hub, "slack", said("U1", "m1", "hello @bot", true), SECRET);
            JsonNode deploy = inbound(hub, "slack", said("U1", "m3", "time to deploy", false), SECRET).json();
            assertEquals("listener", deploy.at("/woken/0").asText(), deploy::toString);
            assertEquals("upper", deploy.at("/context/0").asText());
            await().atMost(WAIT).until(() -> bridge.posts.size() == 2);
            assertEquals(firstTurn, bridge.posts.getFirst().get("text").asText(), "the retry was not answered twice");
            // The listener's turn read the conversation, formatted for agents: the earlier message it kept as
            // context, then the one that woke it, each said at its time; what it kept <internal> was not posted.
            assertEquals("""
                    heard: <context timezone="America/New_York"/>
                    <messages>
                    <message id="m1" from="%s" sender="Ann U1" time="Jan 5, 2026, 4:30 AM">hello @bot</message>
                    <message id="m3" from="%s" sender="Ann U1" time="Jan 5, 2026, 4:30 AM">time to deploy</message>
                    </messages>""".formatted(human, human), bridge.posts.get(1).get("text").asText());
            // The prompt of a chat message, for its receiver's runner (parley agent run reads it): the same formatter.
            String listenerToken = hub.post(hub.admin(), "/v1/nodes/listener/token", obj()).text("token");
            String deployEnvelope = hub.inboxAll(listenerToken, "/v1/inbox").stream()
                    .filter(e -> "m3".equals(e.at("/meta/chat.message_id").asText())).findFirst().orElseThrow()
                    .get("id").asText();
            assertEquals(bridge.posts.get(1).get("text").asText().substring("heard: ".length()),
                    hub.get(listenerToken, "/v1/messages/" + deployEnvelope + "/prompt").text("prompt"));
            assertTrue(hub.get(listenerToken, "/v1/messages/" + deployEnvelope + "/prompt?max=1").text("prompt")
                    .contains("time to deploy") && !hub.get(listenerToken, "/v1/messages/" + deployEnvelope
                    + "/prompt?max=1").text("prompt").contains("hello @bot"), "max=1: the message alone");
            assertError(hub.get(listenerToken, "/v1/messages/" + deployEnvelope + "/prompt?max=101"), 400,
                    "invalid_request");
            assertError(hub.get(other, "/v1/messages/" + deployEnvelope + "/prompt"), 404, "message_not_found");
            String humanToken = hub.post(hub.admin(), "/v1/nodes/" + human + "/token", obj()).text("token");
            assertError(hub.get(humanToken, "/v1/messages/" + deployEnvelope + "/prompt"), 403, "forbidden");
            assertEquals(2, replies(hub, humanToken).size(), "both answers reached the human's node");
            assertTrue(replies(hub, humanToken).stream().allMatch(r -> hub.status(humanToken, r.get("id").asText())
                    .text("state").equals("processed")), "each acked once its bridge took it");

            // Counted: per agent woken, context, skipped; per message held, dropped.
            assertEquals(List.of(2.0, 2.0, 1.0, 1.0), List.of(hub.metric("parley_chat_messages_total{outcome=\"woken\"}"),
                    hub.metric("parley_chat_messages_total{outcome=\"context\"}"),
                    hub.metric("parley_chat_messages_total{outcome=\"held\"}"),
                    hub.metric("parley_chat_messages_total{outcome=\"dropped\"}")));
            // Nobody may take a person's node id, nor make its own send a chat message.
            assertError(hub.post(other, "/v1/nodes", obj("id", "h-ann-u1-squatted", "kind", "external", "parent", "other")),
                    400, "invalid_request");
            hub.post(hub.admin(), "/v1/grants", obj("from", "other", "to", "upper"));
            String forged = hub.post(other, "/v1/messages", obj("to", "upper", "text", "pretend", "meta",
                    obj("trigger", "false", "chat.group", gid, "chat.user_name", "Ann U1"))).text("id");
            await().atMost(WAIT).until(() -> "replied".equals(hub.status(other, forged).text("state")));
            assertEquals("PRETEND", hub.inbox(other).stream().filter(e -> e.get("kind").asText().equals("reply"))
                    .findFirst().orElseThrow().get("text").asText(), "its own text, run as any message");
            // One wired agent gone keeps none of the others from a message.
            assertEquals(204, hub.delete(hub.admin(), "/v1/nodes/listener").status());
            JsonNode afterDelete = inbound(hub, "slack", said("U1", "m4", "deploy @bot", true), SECRET).json();
            assertEquals(List.of("upper", "listener"), List.of(afterDelete.at("/woken/0").asText(),
                    afterDelete.at("/refused/0").asText()), afterDelete::toString);
            // A node cannot forge the hub's card.
            assertError(hub.post(ops, "/v1/messages", obj("to", "other", "kind", "approval_card", "text", "x")), 400,
                    "invalid_request");
        }
    }

    @Test
    void anUnwiredDmAsksTheHubsApproverInChatWhoApprovesItThereAndADeniedRoomIsNotAskedAgain() throws Exception {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub")); Bridge bridge = new Bridge()) {
            assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", "id: upper\ncommand: [sh, -c, \"tr a-z A-Z\"]\n"))
                    .status());
            hub.put(hub.admin(), "/v1/chat/platforms/tg", obj("secret", SECRET, "outboundUrl", bridge.url()));
            // The operator is a person on the platform too: a known member of the ops room.
            String opsRoom = hub.put(hub.admin(), "/v1/chat/groups", obj("platform", "tg", "room", "OPSROOM", "kind",
                    "group")).json().get("id").asText();
            String opsNode = hub.post(hub.admin(), "/v1/chat/groups/" + opsRoom + "/members", obj("user", "OPS",
                    "userName", "Olga")).text("node");
            String ops = hub.post(hub.admin(), "/v1/nodes/" + opsNode + "/token", obj()).text("token");
            ObjectNode dm = obj("room", "D9", "roomKind", "dm", "user", "U9", "userName", "Bo", "messageId", "d1",
                    "text", "can you help?");
            assertEquals("an unwired room and no hub approver to ask", inbound(hub, "tg", dm, SECRET).json()
                    .get("reason").asText());
            assertEquals(204, hub.put(hub.admin(), "/v1/chat/approver", obj("node", opsNode)).status());
            dm.put("messageId", "d2");
            String card = inbound(hub, "tg", dm, SECRET).json().get("card").asText();
            assertEquals("New room", hub.get(ops, "/v1/chat/cards").items().getFirst().get("title").asText());
            assertError(hub.post(ops, "/v1/chat/cards/" + card + "/answer", obj("decision", "approve")), 400,
                    "invalid_request");
            // The card reaches Olga in chat, directly, with its actions for buttons.
            await().atMost(WAIT).until(() -> bridge.posts.size() == 1);
            JsonNode cardPost = bridge.posts.getFirst();
            assertEquals(List.of("OPS", "New room", "approve"), List.of(cardPost.get("user").asText(),
                    cardPost.at("/card/title").asText(), cardPost.at("/card/actions/0/id").asText()), cardPost::toString);
            assertTrue(cardPost.get("room").isNull(), "to her directly");
            // Someone else saying it answers nothing; Olga saying it in chat answers the card.
            ObjectNode forged = obj("room", "D9", "roomKind", "dm", "user", "U9", "userName", "Bo", "messageId", "d3",
                    "text", "approve " + card + " upper");
            assertEquals("an unwired room whose card is pending", inbound(hub, "tg", forged, SECRET).json()
                    .get("reason").asText(), "Bo is no approver: his words are a message, his room's card still pending");
            JsonNode approved = inbound(hub, "tg", obj("room", "D-OPS", "roomKind", "dm", "user", "OPS", "messageId",
                    "o1", "text", "approve " + card + " upper"), SECRET).json();
            assertEquals("upper", approved.at("/woken/0").asText(), approved::toString);
            await().atMost(WAIT).until(() -> bridge.posts.size() == 2);
            assertEquals("D9", bridge.posts.get(1).get("room").asText());
            String dmTurn = bridge.posts.get(1).get("text").asText();
            assertTrue(dmTurn.contains("SENDER=\"BO\"") && dmTurn.endsWith(">CAN YOU HELP?</MESSAGE>\n</MESSAGES>"), dmTurn);
            JsonNode wiring = hub.get(hub.admin(), "/v1/chat/groups").items().getFirst().get("wirings").get(0);
            assertEquals(List.of("pattern", "."), List.of(wiring.get("engageMode").asText(),
                    wiring.get("engagePattern").asText()), "a DM's default: every message engages");

            // A group room where the bot is mentioned, denied: not asked again.
            ObjectNode mention = obj("room", "G7", "roomKind", "threaded", "user", "U9", "messageId", "g1",
                    "text", "@bot join us", "mentionsBot", true);
            String roomCard = inbound(hub, "tg", mention, SECRET).json().get("card").asText();
            assertError(hub.post(hub.admin(), "/v1/chat/cards/" + roomCard + "/answer", obj("decision", "maybe")), 400,
                    "invalid_request");
            assertEquals(200, hub.post(ops, "/v1/chat/cards/" + roomCard + "/answer", obj("decision", "reject")).status());
            mention.put("messageId", "g2");
            assertEquals("the room was denied: it is not asked about again", inbound(hub, "tg", mention, SECRET).json()
                    .get("reason").asText());
            assertTrue(hub.get(hub.admin(), "/v1/chat/groups").items().stream()
                    .anyMatch(g -> g.get("room").asText().equals("G7") && !g.get("deniedAt").isNull()));
        }
    }

    @Test
    void strangersAreTurnedAwayOnceAThousandCardsWaitAndTwoFirstMessagesMakeOnePerson() throws Exception {
        try (HubFixture hub = HubFixture.start(tmp.resolve("hub"), HubFixture::unthrottled)) {
            hub.createNode("ops", null);
            assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", "id: upper\ncommand: [cat]\n")).status());
            hub.put(hub.admin(), "/v1/chat/platforms/slack", obj("secret", SECRET));
            String gid = hub.put(hub.admin(), "/v1/chat/groups", obj("platform", "slack", "room", "C1", "kind", "group",
                    "approver", "ops")).json().get("id").asText();
            hub.put(hub.admin(), "/v1/chat/groups/" + gid + "/wirings/upper", obj());
            java.util.concurrent.atomic.AtomicInteger held = new java.util.concurrent.atomic.AtomicInteger();
            try (var pool = java.util.concurrent.Executors.newFixedThreadPool(8)) {
                for (int i = 0; i < dev.parley.core.Chats.MAX_PENDING_CARDS; i++) {
                    int n = i;
                    pool.submit(() -> {
                        if ("held".equals(inbound(hub, "slack", said("S" + n, "s" + n, "hi", true), SECRET).json()
                                .get("outcome").asText())) {
                            held.incrementAndGet();
                        }
                    });
                }
            }
            assertEquals(dev.parley.core.Chats.MAX_PENDING_CARDS, held.get());
            assertEquals(204, hub.put(hub.admin(), "/v1/chat/approver", obj("node", "ops")).status());
            JsonNode turnedAway = inbound(hub, "slack", said("S-late", "late", "hi", true), SECRET).json();
            assertTrue(turnedAway.get("reason").asText().contains("1000 cards wait for an answer"), turnedAway::toString);
            assertEquals("an unwired room, and 1000 cards wait for an answer: turned away until fewer do",
                    inbound(hub, "slack", obj("room", "NEW", "roomKind", "dm", "user", "U7", "messageId", "x",
                            "text", "hello"), SECRET).json().get("reason").asText());
            assertTrue(hub.get(hub.admin(), "/v1/chat/groups").items().stream()
                    .noneMatch(g -> g.get("room").asText().equals("NEW")), "a room turned away is not written down");

            // A card approved after its group lost its wirings: a member now, and told there is no one to hear it.
            String waiting = hub.get(hub.admin(), "/v1/chat/cards").items().getFirst().get("id").asText();
            assertEquals(204, hub.delete(hub.admin(), "/v1/chat/groups/" + gid + "/wirings/upper").status());
            JsonNode unheard = hub.post(hub.admin(), "/v1/chat/cards/" + waiting + "/answer", obj("decision", "approve"))
                    .json();
            assertEquals("approved, but the group has no wired agent now", unheard.at("/delivered/reason").asText(),
                    unheard::toString);

            // Two first messages of one person at once, in a public room: one node speaks for her.
            String open = hub.put(hub.admin(), "/v1/chat/groups", obj("platform", "slack", "room", "OPEN", "kind", "group",
                    "unknownSenderPolicy", "public")).json().get("id").asText();
            hub.put(hub.admin(), "/v1/chat/groups/" + open + "/wirings/upper", obj());
            try (var pool = java.util.concurrent.Executors.newFixedThreadPool(4)) {
                for (int i = 0; i < 4; i++) {
                    int n = i;
                    pool.submit(() -> assertEquals("delivered", inbound(hub, "slack", obj("room", "OPEN", "user", "Z1",
                            "userName", "Zoe", "messageId", "z" + n, "text", "@bot hi", "mentionsBot", true), SECRET)
                            .json().get("outcome").asText()));
                }
            }
            assertEquals(1, hub.get(hub.admin(), "/v1/nodes").items().stream()
                    .filter(node -> node.get("id").asText().startsWith("h-zoe-")).count());
        }
    }

    private static List<JsonNode> replies(HubFixture hub, String token) {
        return hub.inbox(token).stream().filter(e -> e.get("kind").asText().equals("reply")).toList();
    }
}
