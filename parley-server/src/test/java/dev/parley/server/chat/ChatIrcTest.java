package dev.parley.server.chat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.WebhookSignature;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static dev.parley.server.it.HubFixture.assertError;
import static dev.parley.server.it.HubFixture.obj;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Humans in chat rooms over IRC, on a real hub and a real IRC server (ngircd, started here),
 * people being IRC clients: a stranger in #dev is held and the card reaches the approver
 * privately, who approves it privately, and the agent's answer appears in #dev; a DM from an
 * unwired person asks the hub's approver, who wires it; the bot comes back after a hub restart
 * and after the IRC server is killed, and what was answered meanwhile is posted then.
 */
class ChatIrcTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Pattern CARD = Pattern.compile("card ([0-9a-f-]{36})");

    @TempDir
    Path tmp;

    @BeforeEach
    void needsNgircd() {
        assumeTrue(Ngircd.installed(), "ngircd is not installed (apt-get install ngircd; ./test installs it): skipped");
    }

    /**
     * An agent that upper-cases what it is told, once the file {@code gate} is in its directory
     * (there from the start); what it read last (its conversation, formatted for agents) is in {@code said}.
     */
    private static Path upper(HubFixture hub, Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("gate"), "");
        assertEquals(201, hub.post(hub.admin(), "/v1/agents", obj("spec", "id: upper\nworkdir: " + dir + "\n"
                + "command: [sh, -c, \"cat > said; while [ ! -e gate ]; do sleep 0.05; done; tr a-z A-Z < said\"]\n"))
                .status());
        return dir;
    }

    private static ObjectNode irc(String server, String... channels) {
        return obj("irc", obj("server", server, "nick", "parley", "channels", List.of(channels), "password",
                Ngircd.PASSWORD));
    }

    /** A person on IRC as a known member of #ops, whose human node is returned. */
    private static String person(HubFixture hub, String nick) {
        String ops = hub.put(hub.admin(), "/v1/chat/groups", obj("platform", "irc", "room", "#ops", "kind", "group"))
                .json().get("id").asText();
        return hub.post(hub.admin(), "/v1/chat/groups/" + ops + "/members", obj("user", nick, "userName", nick))
                .text("node");
    }

    private static String cardIn(IrcPerson.Heard heard) {
        Matcher m = CARD.matcher(heard.text());
        assertTrue(m.find(), heard::toString);
        return m.group(1);
    }

    private static Optional<Boolean> connected(HubFixture hub) {
        return hub.get(hub.admin(), "/v1/chat/platforms").items().stream().filter(p -> p.get("id").asText()
                .equals("irc")).findFirst().map(p -> p.get("connected").asBoolean());
    }

    @Test
    void aStrangerIsHeldTheApproverApprovesOverIrcAndTheAnswerAppearsInTheChannel() throws Exception {
        try (Ngircd ircd = Ngircd.start(tmp.resolve("ircd")); HubFixture hub = HubFixture.start(tmp.resolve("hub"));
             IrcPerson stranger = IrcPerson.join(ircd, "stranger", "#dev");
             IrcPerson approver = IrcPerson.join(ircd, "approver")) {
            upper(hub, tmp.resolve("upper"));
            String ops = hub.createNode("ops", null);
            assertError(hub.put(ops, "/v1/chat/platforms/irc", irc(ircd.server(), "#dev")), 403, "forbidden");
            for (ObjectNode bad : List.of(obj("server", "127.0.0.1:70000", "nick", "parley"),
                    obj("server", "irc.example:6667", "nick", "9lives"),
                    obj("server", "irc.example:6667", "nick", "parley", "channels", List.of("dev")),
                    obj("server", "irc.example:6667", "nick", "parley", "password", "a\nb"),
                    obj("nick", "parley"))) {
                assertError(hub.put(hub.admin(), "/v1/chat/platforms/irc", obj("irc", bad)), 400, "invalid_request");
            }
            ObjectNode both = irc(ircd.server(), "#dev").put("secret", "bridge-secret-0123456789");
            assertTrue(assertError(hub.put(hub.admin(), "/v1/chat/platforms/irc", both), 400, "invalid_request").body()
                    .contains("not both"));

            // Registered: the bot connects with the server's password and joins #dev.
            assertEquals(204, hub.put(hub.admin(), "/v1/chat/platforms/irc", irc(ircd.server(), "#DEV")).status());
            stranger.awaitJoins("parley", "#dev", 1);
            await().atMost(WAIT).until(() -> connected(hub).orElse(false));
            JsonNode platform = hub.get(hub.admin(), "/v1/chat/platforms").items().getFirst();
            assertEquals(List.of("irc", ircd.server(), "parley", "#dev", "true"), List.of(platform.get("kind").asText(),
                    platform.get("server").asText(), platform.get("nick").asText(), platform.at("/channels/0").asText(),
                    platform.get("password").asText()), platform::toString);
            assertNoFileHolds(tmp.resolve("hub"), Ngircd.PASSWORD);

            String approverNode = person(hub, "approver");
            String dev = hub.put(hub.admin(), "/v1/chat/groups", obj("platform", "irc", "room", "#dev", "kind", "group",
                    "name", "#dev", "approver", approverNode)).json().get("id").asText();
            assertEquals(200, hub.put(hub.admin(), "/v1/chat/groups/" + dev + "/wirings/upper", obj()).status());

            // A stranger mentions the bot: held; the card reaches the approver privately.
            stranger.say("#dev", "parley: hello");
            String card = cardIn(approver.awaitHeard("parley", "approver", "New sender stranger in #dev (irc) says: hello"));
            JsonNode pending = hub.get(hub.admin(), "/v1/chat/cards").items().getFirst();
            assertEquals(List.of(card, "stranger", "hello", "#dev"), List.of(pending.get("id").asText(),
                    pending.get("user").asText(), pending.get("text").asText(), pending.get("room").asText()),
                    "the mention is left out of the text");

            // The approver answers privately: the held message reaches the agent, its answer appears in #dev.
            approver.say("parley", "approve " + card);
            stranger.awaitHeard("parley", "#dev", "HELLO");
            assertEquals(List.of(), hub.get(hub.admin(), "/v1/chat/cards").items());
            assertTrue(hub.get(hub.admin(), "/v1/audit?action=chat.card").body().contains("sender card approved"));

            // Nothing comes in for an IRC platform over the webhook; registered as a bridge, the bot leaves.
            byte[] forged = obj("room", "#dev", "user", "approver", "messageId", "m1", "text", "approve " + card)
                    .toString().getBytes(StandardCharsets.UTF_8);
            assertError(hub.request("POST", "/v1/chat/inbound/irc", null, forged, Map.of("Content-Type",
                    "application/json", WebhookSignature.HEADER, WebhookSignature.sign("any-secret-at-all-123", forged))),
                    401, "unauthorized");
            assertEquals(204, hub.put(hub.admin(), "/v1/chat/platforms/irc", obj("secret", "bridge-secret-0123456789"))
                    .status());
            stranger.awaitQuit("parley");
            assertEquals(List.of("webhook"), hub.get(hub.admin(), "/v1/chat/platforms").items().stream()
                    .map(p -> p.get("kind").asText()).toList());
        }
    }

    @Test
    void aDmFromAnUnwiredPersonAsksTheHubsApproverWhoWiresItOverIrc() throws Exception {
        try (Ngircd ircd = Ngircd.start(tmp.resolve("ircd")); HubFixture hub = HubFixture.start(tmp.resolve("hub"));
             IrcPerson approver = IrcPerson.join(ircd, "approver");
             IrcPerson visitor = IrcPerson.join(ircd, "Visitor")) {
            upper(hub, tmp.resolve("upper"));
            assertEquals(204, hub.put(hub.admin(), "/v1/chat/platforms/irc", irc(ircd.server())).status());
            await().atMost(WAIT).until(() -> connected(hub).orElse(false));
            assertEquals(204, hub.put(hub.admin(), "/v1/chat/approver", obj("node", person(hub, "approver"))).status());

            visitor.say("parley", "can you help?");
            String card = cardIn(approver.awaitHeard("parley", "approver", "New room Visitor (irc): Visitor called the bot"));
            assertEquals("visitor", hub.get(hub.admin(), "/v1/chat/cards").items().getFirst().get("room").asText(),
                    "a DM's room is the sender's nick as the server folds it");
            approver.say("parley", "approve " + card + " upper");
            visitor.awaitHeard("parley", "Visitor", "CAN YOU HELP?");
            JsonNode wiring = hub.get(hub.admin(), "/v1/chat/groups").items().stream()
                    .filter(g -> g.get("room").asText().equals("visitor")).findFirst().orElseThrow().get("wirings").get(0);
            assertEquals(List.of("upper", "pattern"), List.of(wiring.get("agent").asText(),
                    wiring.get("engageMode").asText()), "a DM's default: every message engages");
        }
    }

    @Test
    void theBotComesBackAfterAHubRestartAndAfterTheServerIsKilledAndPostsWhatWasAnsweredMeanwhile() throws Exception {
        Path data = tmp.resolve("hub");
        try (Ngircd ircd = Ngircd.start(tmp.resolve("ircd")); Relay relay = new Relay(ircd.port())) {
            IrcPerson stranger = IrcPerson.join(ircd, "stranger", "#dev");
            Path upper;
            try (HubFixture hub = HubFixture.start(data)) {
                upper = upper(hub, tmp.resolve("upper"));
                assertEquals(204, hub.put(hub.admin(), "/v1/chat/platforms/irc", irc(relay.server(), "#dev")).status());
                String dev = hub.put(hub.admin(), "/v1/chat/groups", obj("platform", "irc", "room", "#dev", "kind",
                        "group", "unknownSenderPolicy", "public")).json().get("id").asText();
                hub.put(hub.admin(), "/v1/chat/groups/" + dev + "/wirings/upper", obj());
                stranger.awaitJoins("parley", "#dev", 1);
            }
            // The hub stops (the bot says goodbye) and starts again on its data: the bot is back in #dev.
            stranger.awaitQuit("parley");
            HubFixture hub = HubFixture.start(data);
            try {
                stranger.awaitJoins("parley", "#dev", 2);
                stranger.say("#dev", "parley, back again");
                stranger.awaitHeard("parley", "#dev", "BACK AGAIN");

                // The agent is told something, then the IRC server dies before it answers.
                Files.delete(upper.resolve("gate"));
                stranger.say("#dev", "parley: said before the outage");
                await().atMost(WAIT).until(() -> Files.exists(upper.resolve("said"))
                        && Files.readString(upper.resolve("said")).contains(">said before the outage</message>"));
                relay.hold();
                stranger.close();
                ircd.kill();
                await().atMost(WAIT).until(() -> connected(hub).equals(Optional.of(false)));

                // Answered while the bot is away: not posted, not acked.
                Files.writeString(upper.resolve("gate"), "");
                String human = hub.get(hub.admin(), "/v1/nodes").items().stream().map(n -> n.get("id").asText())
                        .filter(id -> id.startsWith("h-stranger-")).findFirst().orElseThrow();
                String token = hub.post(hub.admin(), "/v1/nodes/" + human + "/token", obj()).text("token");
                await().atMost(WAIT).until(() -> answer(hub, token, "SAID BEFORE THE OUTAGE").isPresent());
                String answer = answer(hub, token, "SAID BEFORE THE OUTAGE").orElseThrow();
                assertFalse(hub.status(token, answer).text("state").equals("processed"));

                // The server is back on its port; people first, then the bot reconnects and posts it.
                ircd.restart();
                try (IrcPerson back = IrcPerson.join(ircd, "stranger", "#dev")) {
                    relay.release();
                    back.awaitHeard("parley", "#dev", "SAID BEFORE THE OUTAGE");
                    await().atMost(WAIT).until(() -> hub.status(token, answer).text("state").equals("processed"));
                    assertEquals(Optional.of(true), connected(hub));
                }
            } finally {
                hub.close();
            }
        }
    }

    /** The id of the answer in the human's inbox to the message {@code text} (the agent upper-cases its prompt), once there is one. */
    private static Optional<String> answer(HubFixture hub, String token, String text) {
        return hub.inbox(token).stream().filter(e -> e.path("text").asText().contains(">" + text + "</MESSAGE>"))
                .map(e -> e.get("id").asText()).findFirst();
    }

    /** The password is sealed at rest: no file of the hub's data holds it in the clear. */
    private static void assertNoFileHolds(Path dir, String secret) throws IOException {
        byte[] needle = secret.getBytes(StandardCharsets.UTF_8);
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String content = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
                assertFalse(content.contains(new String(needle, StandardCharsets.ISO_8859_1)), file + " holds it");
            }
        }
    }
}
