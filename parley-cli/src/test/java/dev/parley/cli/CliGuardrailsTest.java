package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.parley.cli.CliRun.addNode;
import static dev.parley.cli.CliRun.as;
import static dev.parley.cli.CliRun.assertFailure;
import static dev.parley.cli.CliRun.parley;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The guardrails commands against a real hub, in-process (see {@link CliRun}): invites and
 * {@code join} with a node key, key-signed token rotation, policy rules and checks, payload
 * schemas, the audit log (search, export, follow), rate limits and the hub's signing keys.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CliGuardrailsTest {
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final Pattern TOKEN = Pattern.compile("(?m)^token\\s+(\\S+)$");
    /** Quarantined nodes receive nothing, whatever the ACL says. */
    private static final String QUARANTINE = "target.labels.?quarantine.orValue('') == 'true'";

    @TempDir
    Path data;

    private Hub hub;
    private String admin;
    private String lead;
    private final ExecutorService background = Executors.newCachedThreadPool();

    @BeforeEach
    void startHub() throws IOException {
        Path policy = data.resolve("policy.json");
        Files.writeString(policy, """
                {"rules": [{"name": "quarantine", "effect": "deny", "when": "%s"}]}
                """.formatted(QUARANTINE), StandardCharsets.UTF_8);
        hub = Hub.start(HubConfig.defaults(data.resolve("hub")).withPort(0).withPolicy(Optional.of(policy)));
        admin = hub.adminToken();
        lead = addNode(hub, "lead");
        addNode(hub, "w1", "--parent", "lead");
        addNode(hub, "w2", "--parent", "lead", "--label", "quarantine=true");
    }

    @AfterEach
    void stopEverything() throws InterruptedException {
        background.shutdownNow(); // interrupts an audit --follow still polling
        background.awaitTermination(10, TimeUnit.SECONDS);
        hub.close();
    }

    private static String token(CliRun run) {
        assertEquals(0, run.exit, run::describe);
        Matcher m = TOKEN.matcher(run.out());
        assertTrue(m.find(), run::describe);
        return m.group(1);
    }

    private CliRun join(String invite, String name, Path keyDir) {
        return parley("join", "--invite", invite, "--name", name, "--key-dir", keyDir.toString(), "--url", hub.url());
    }

    @Test
    void joinWithAnInviteCreatesTheNodeAndItsKeyAndRotationIsSignedWithIt() throws IOException {
        CliRun invited = parley(as(hub, admin, "invite", "create", "--node-id", "newbie", "--parent", "lead",
                "--ttl", "15m"));
        assertTrue(invited.out().startsWith("invited  id="), invited::describe);
        assertTrue(invited.out().contains("node=newbie  kind=external  parent=lead  expires=20"), invited::describe);
        String invite = token(invited);
        assertTrue(invite.startsWith("pi_"), invite);

        Path keyDir = data.resolve("keys").resolve("newbie");
        CliRun joined = join(invite, "newbie", keyDir);
        assertTrue(joined.out().startsWith("joined  id=newbie  kind=external  parent=lead  depth=1"), joined::describe);
        String first = token(joined);
        assertTrue(first.startsWith("pn_"), first);

        // The key: private as PKCS#8 PEM, public as the raw key in base64url, readable by the owner only.
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(keyDir)));
        for (String file : List.of(NodeKeys.PRIVATE_FILE, NodeKeys.PUBLIC_FILE)) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(keyDir.resolve(file))),
                    file);
        }
        assertTrue(Files.readString(keyDir.resolve(NodeKeys.PRIVATE_FILE)).startsWith("-----BEGIN PRIVATE KEY-----"));
        assertTrue(Files.readString(keyDir.resolve(NodeKeys.PUBLIC_FILE)).strip().matches("[A-Za-z0-9_-]{43}"));

        // The token works: a child may send to its parent.
        CliRun sent = parley(as(hub, first, "send", "--to", "lead", "hello"));
        assertEquals(0, sent.exit, sent::describe);

        // The node was admitted with a key: rotating its own token needs a proof, signed automatically.
        Path otherKey = data.resolve("keys").resolve("impostor");
        NodeKeys.generate(otherKey);
        assertFailure(parley(as(hub, first, "token", "rotate", "newbie", "--key-dir", otherKey.toString())),
                ExitStatus.UNAUTHORIZED, "node_proof_invalid");
        CliRun rotated = parley(as(hub, first, "token", "rotate", "newbie", "--key-dir", keyDir.toString()));
        assertTrue(rotated.out().startsWith("rotated  node=newbie  proof=signed"), rotated::describe);
        String second = token(rotated);
        assertNotEquals(first, second);
        assertFailure(parley(as(hub, first, "send", "--to", "lead", "hi")), ExitStatus.UNAUTHORIZED, "unauthorized");
        assertEquals(0, parley(as(hub, second, "send", "--to", "lead", "hi")).exit);
        CliRun noKey = parley(as(hub, second, "token", "rotate", "newbie", "--key-dir", data.resolve("none").toString()));
        assertEquals(ExitStatus.USAGE, noKey.exit, noKey::describe);

        // An invite is single-use; a made-up one is no invite at all.
        assertFailure(join(invite, "newbie", data.resolve("keys").resolve("again")), ExitStatus.CONFLICT,
                "token_already_used");
        assertFailure(join("pi_made-up", "other", data.resolve("keys").resolve("other")), ExitStatus.UNAUTHORIZED,
                "invalid_token");
        CliRun badName = join(invite, "Not A Node", data.resolve("keys").resolve("bad"));
        assertEquals(ExitStatus.USAGE, badName.exit, badName::describe);
        assertFalse(Files.exists(data.resolve("keys").resolve("bad")), "nothing is written for a refused name");

        // The whole handshake is in the audit log.
        await().atMost(PATIENCE).until(() -> parley(as(hub, admin, "audit", "--node", "newbie", "--decision", "deny",
                "--json")).json().path("items").size() >= 1);
        JsonNode redeemed = parley(as(hub, admin, "audit", "--action", "auth.redeem", "--json")).json();
        assertEquals("newbie", redeemed.path("items").get(0).path("target").asText(), redeemed::toString);
    }

    @Test
    void anUnboundInviteAsJsonAndJoinAfterTheSigningKeyRotates() {
        JsonNode keys = parley(as(hub, admin, "keys", "list", "--json")).json();
        assertEquals(1, keys.path("keys").size(), keys::toString);
        String oldKid = keys.path("keys").get(0).path("kid").asText();

        CliRun rotated = parley(as(hub, admin, "keys", "rotate"));
        assertEquals(0, rotated.exit, rotated::describe);
        Matcher kid = Pattern.compile("^rotated  kid=(\\S+)$").matcher(rotated.out().strip());
        assertTrue(kid.matches(), rotated::describe);
        assertNotEquals(oldKid, kid.group(1));
        CliRun listed = parley(as(hub, admin, "keys", "list"));
        assertTrue(listed.out().contains(oldKid) && listed.out().contains(kid.group(1)), listed::describe);
        assertFailure(parley(as(hub, lead, "keys", "rotate")), ExitStatus.FORBIDDEN, "forbidden");

        // A node invites a child of itself; the joiner names it.
        JsonNode invite = parley(as(hub, lead, "invite", "create", "--json")).json();
        assertTrue(invite.path("nodeId").isNull(), invite::toString);
        assertEquals("lead", invite.path("parent").asText(), invite::toString);
        CliRun joined = join(invite.path("inviteToken").asText(), "helper", data.resolve("k"));
        assertEquals(0, joined.exit, joined::describe);

        // --json: the hub's answer to the redeem, token included.
        JsonNode second = parley(as(hub, admin, "invite", "create", "--json")).json();
        JsonNode node = parley("join", "--invite", second.path("inviteToken").asText(), "--name", "solo",
                "--key-dir", data.resolve("solo").toString(), "--url", hub.url(), "--json").json();
        assertEquals("solo", node.path("id").asText(), node::toString);
        assertTrue(node.path("token").asText().startsWith("pn_"), node::toString);
    }

    @Test
    void policyShowAndCheckTellAllowedFromDenied() {
        CliRun shown = parley(as(hub, admin, "policy", "show"));
        assertEquals(0, shown.exit, shown::describe);
        assertTrue(Pattern.compile("(?m)^version\\s+p-[0-9a-f]{12}$").matcher(shown.out()).find(), shown::describe);
        assertTrue(Pattern.compile("(?m)^quarantine\\s+deny\\s+" + Pattern.quote(QUARANTINE) + "$")
                .matcher(shown.out()).find(), shown::describe);
        JsonNode policy = parley(as(hub, admin, "policy", "show", "--json")).json();
        String version = policy.path("version").asText();
        assertEquals("quarantine", policy.path("rules").get(0).path("name").asText(), policy::toString);

        CliRun allowed = parley(as(hub, admin, "policy", "check", "--from", "lead", "--to", "w1"));
        assertEquals(ExitStatus.OK, allowed.exit, allowed::describe);
        assertTrue(Pattern.compile("(?m)^decision\\s+allow$").matcher(allowed.out()).find(), allowed::describe);
        assertTrue(allowed.out().contains(version), allowed::describe);

        CliRun denied = parley(as(hub, admin, "policy", "check", "--from", "lead", "--to", "w2", "--kind", "message"));
        assertEquals(ExitStatus.FORBIDDEN, denied.exit, denied::describe);
        assertEquals("", denied.err(), denied::describe);
        assertTrue(Pattern.compile("(?m)^decision\\s+deny$").matcher(denied.out()).find(), denied::describe);
        assertTrue(Pattern.compile("(?m)^rule\\s+quarantine$").matcher(denied.out()).find(), denied::describe);
        assertTrue(Pattern.compile("(?m)^reason\\s+\\S.*$").matcher(denied.out()).find(), denied::describe);
        assertTrue(Pattern.compile("(?m)^version\\s+" + version + "$").matcher(denied.out()).find(), denied::describe);

        // --json prints the hub's verdict and keeps the exit status; a node checks its own sends.
        CliRun asJson = parley(as(hub, lead, "policy", "check", "--from", "lead", "--to", "w2", "--json"));
        assertEquals(ExitStatus.FORBIDDEN, asJson.exit, asJson::describe);
        assertTrue(asJson.out().contains("\"decision\":\"deny\""), asJson::describe);
        assertFailure(parley(as(hub, lead, "policy", "check", "--from", "w1", "--to", "lead")),
                ExitStatus.FORBIDDEN, "forbidden");
        assertFailure(parley(as(hub, lead, "policy", "show")), ExitStatus.FORBIDDEN, "forbidden");

        // The real send gets the same answer.
        assertFailure(parley(as(hub, lead, "send", "--to", "w2", "hi")), ExitStatus.FORBIDDEN, "acl_denied");
    }

    @Test
    void schemasAreSetListedShownAndEnforcedUntilRemoved() throws IOException {
        Path file = data.resolve("report.schema.json");
        Files.writeString(file, """
                {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                 "required": ["score"], "properties": {"score": {"type": "integer"}}}
                """, StandardCharsets.UTF_8);

        CliRun put = parley(as(hub, admin, "schema", "put", "report", file.toString()));
        assertEquals(0, put.exit, put::describe);
        assertTrue(put.out().startsWith("schema set  kind=report  version="), put::describe);
        CliRun list = parley(as(hub, admin, "schema", "list"));
        assertTrue(Pattern.compile("(?m)^report\\s+\\S+\\s+20\\S+$").matcher(list.out()).find(), list::describe);
        CliRun shown = parley(as(hub, admin, "schema", "show", "report"));
        assertTrue(shown.out().startsWith("kind=report"), shown::describe);
        assertTrue(shown.out().contains("\"required\""), shown::describe);
        assertEquals("integer", parley(as(hub, admin, "schema", "show", "report", "--json")).json()
                .at("/schema/properties/score/type").asText());

        CliRun violating = parley(as(hub, lead, "send", "--to", "w1", "--kind", "report", "--data", "{\"score\":\"high\"}"));
        assertFailure(violating, ExitStatus.REFUSED, "schema_violation");
        assertTrue(violating.err().contains("/score"), violating::describe);
        CliRun valid = parley(as(hub, lead, "send", "--to", "w1", "--kind", "report", "--data", "{\"score\":3}"));
        assertEquals(0, valid.exit, valid::describe);

        CliRun notJson = parley(as(hub, admin, "schema", "put", "report", data.resolve("missing.json").toString()));
        assertEquals(ExitStatus.USAGE, notJson.exit, notJson::describe);
        assertFailure(parley(as(hub, lead, "schema", "put", "report", file.toString())), ExitStatus.FORBIDDEN,
                "forbidden");

        CliRun removed = parley(as(hub, admin, "schema", "rm", "report"));
        assertEquals("deleted  schema=report", removed.out().strip(), removed::describe);
        assertEquals(0, parley(as(hub, admin, "schema", "list", "--json")).json().path("items").size());
        assertFailure(parley(as(hub, admin, "schema", "show", "report")), ExitStatus.NOT_FOUND, "schema_not_found");
        assertEquals(0, parley(as(hub, lead, "send", "--to", "w1", "--kind", "report", "--data", "{\"score\":\"high\"}"))
                .exit, "no schema, no check");
    }

    @Test
    void auditSearchFiltersAndExportsJsonLines() {
        Instant start = Instant.now().minusSeconds(1);
        assertFailure(parley(as(hub, lead, "send", "--to", "w2", "hi")), ExitStatus.FORBIDDEN, "acl_denied");
        assertEquals(0, parley(as(hub, lead, "send", "--to", "w1", "hi")).exit);
        // Denials are audited off the request path: wait for the entry.
        await().atMost(PATIENCE).until(() -> parley(as(hub, admin, "audit", "--rule", "quarantine", "--json")).json()
                .path("items").size() == 1);

        CliRun table = parley(as(hub, admin, "audit", "--decision", "deny", "--rule", "quarantine",
                "--since", start.toString()));
        assertEquals(0, table.exit, table::describe);
        List<String> lines = table.out().lines().toList();
        assertEquals(2, lines.size(), table::describe);
        assertTrue(lines.get(0).matches("ID\\s+AT\\s+DECISION\\s+ACTOR\\s+ACTION\\s+TARGET\\s+RULE\\s+REASON"),
                table::describe);
        assertTrue(lines.get(1).matches("\\d+\\s+20\\S+\\s+deny\\s+lead\\s+send\\s+w2\\s+quarantine\\s+.*"),
                table::describe);

        JsonNode w2 = parley(as(hub, admin, "audit", "--node", "w2", "--action", "send", "--json")).json();
        assertEquals(1, w2.path("items").size(), w2::toString);
        assertEquals("deny", w2.path("items").get(0).path("decision").asText());
        JsonNode sends = parley(as(hub, admin, "audit", "--action", "send", "--since", "1h", "--json")).json();
        assertEquals(2, sends.path("items").size(), sends::toString);
        assertEquals(0, parley(as(hub, admin, "audit", "--action", "send", "--until", start.toString(), "--json"))
                .json().path("items").size());
        CliRun paged = parley(as(hub, admin, "audit", "--action", "send", "--limit", "1"));
        assertTrue(paged.out().contains("(more: add --before "), paged::describe);

        List<JsonNode> exported = parley(as(hub, admin, "audit", "--export", "--action", "send")).jsonLines();
        assertEquals(2, exported.size(), exported::toString);
        assertEquals(List.of("allow", "deny"), exported.stream().map(e -> e.path("decision").asText()).toList());
        assertTrue(exported.get(0).path("id").asLong() > exported.get(1).path("id").asLong(), "newest first");
        assertEquals(1, parley(as(hub, admin, "audit", "--export", "--limit", "1")).jsonLines().size());

        assertFailure(parley(as(hub, lead, "audit")), ExitStatus.FORBIDDEN, "forbidden");
        CliRun badDecision = parley(as(hub, admin, "audit", "--decision", "maybe"));
        assertEquals(ExitStatus.USAGE, badDecision.exit, badDecision::describe);
        CliRun both = parley(as(hub, admin, "audit", "--follow", "--export"));
        assertEquals(ExitStatus.USAGE, both.exit, both::describe);
    }

    @Test
    void auditFollowPrintsNewEntriesInOrder() throws Exception {
        Instant start = Instant.now().minusSeconds(1);
        assertEquals(0, parley(as(hub, lead, "send", "--to", "w1", "one")).exit);
        assertEquals(0, parley(as(hub, lead, "send", "--to", "w1", "two")).exit);

        // From --since: what is there already, oldest first, then what comes.
        CliRun replay = new CliRun();
        Future<Integer> replaying = background.submit(() -> replay.execute(as(hub, admin, "audit", "--follow",
                "--action", "send", "--since", start.toString(), "--count", "3")));
        await().atMost(PATIENCE).until(() -> replay.out().lines().count() >= 2);
        assertEquals(0, parley(as(hub, lead, "send", "--to", "w1", "three")).exit);
        assertEquals(0, replaying.get(PATIENCE.toSeconds(), TimeUnit.SECONDS), replay::describe);
        List<Long> ids = replay.out().lines().map(CliGuardrailsTest::entryId).toList();
        assertEquals(3, ids.size(), replay::describe);
        assertTrue(ids.get(0) < ids.get(1) && ids.get(1) < ids.get(2), replay::describe);
        assertTrue(replay.out().lines().allMatch(l -> l.contains("allow  lead send w1")), replay::describe);

        // Without --since: only entries written after it started; --json prints each entry's JSON.
        CliRun live = new CliRun();
        Future<Integer> following = background.submit(() -> live.execute(as(hub, admin, "audit", "--follow",
                "--action", "send", "--count", "1", "--json")));
        // The follower's starting point is not observable: send until it has seen one.
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(200)).until(() -> {
            assertEquals(0, parley(as(hub, lead, "send", "--to", "w1", "more")).exit);
            return following.isDone();
        });
        assertEquals(0, following.get(), live::describe);
        List<JsonNode> entries = live.jsonLines();
        assertEquals(1, entries.size(), live::describe);
        assertTrue(entries.get(0).path("id").asLong() > ids.get(2), live::describe);
    }

    private static long entryId(String line) {
        Matcher m = Pattern.compile("^\\[(\\d+)] .*").matcher(line);
        assertTrue(m.matches(), line);
        return Long.parseLong(m.group(1));
    }

    @Test
    void limitsAreSetShownAndReset() {
        CliRun shown = parley(as(hub, admin, "limits", "show", "w1"));
        assertEquals("node=w1  rate=200.0/s  burst=400  (the hub's default)", shown.out().strip(), shown::describe);

        CliRun set = parley(as(hub, admin, "limits", "set", "w1", "--rate", "5", "--burst", "10"));
        assertEquals("limits set  node=w1  rate=5.0/s  burst=10  (override)", set.out().strip(), set::describe);
        JsonNode own = parley(as(hub, lead, "limits", "show", "lead", "--json")).json();
        assertTrue(own.path("default").asBoolean(), own::toString);
        JsonNode w1 = parley(as(hub, admin, "limits", "show", "w1", "--json")).json();
        assertEquals(5.0, w1.path("rate").asDouble(), w1::toString);
        assertEquals(10, w1.path("burst").asLong(), w1::toString);
        assertFalse(w1.path("default").asBoolean(), w1::toString);

        assertFailure(parley(as(hub, lead, "limits", "set", "w1", "--rate", "1000", "--burst", "1000")),
                ExitStatus.FORBIDDEN, "forbidden");
        CliRun zero = parley(as(hub, admin, "limits", "set", "w1", "--rate", "0", "--burst", "1"));
        assertEquals(ExitStatus.USAGE, zero.exit, zero::describe);
        CliRun missing = parley(as(hub, admin, "limits", "set", "w1", "--rate", "5"));
        assertEquals(ExitStatus.USAGE, missing.exit, missing::describe);

        CliRun reset = parley(as(hub, admin, "limits", "reset", "w1"));
        assertTrue(reset.out().contains("(the hub's default)"), reset::describe);
    }

    @Test
    void serveWiresTheGuardrailOptionsIntoTheHubConfig() {
        Path policy = data.resolve("policy.json");
        CommandLine cli = new CommandLine(new ServeCommand());
        cli.parseArgs("--data", data.resolve("served").toString(), "--policy", policy.toString(),
                "--require-node-proof", "--rate", "5", "--burst", "10", "--audit-retention", "7d");
        HubConfig config = ((ServeCommand) cli.getCommand()).config();
        assertEquals(Optional.of(policy), config.policy().file());
        assertTrue(config.gate().requireNodeProof());
        assertEquals(5.0, config.gate().nodeRate());
        assertEquals(10, config.gate().nodeBurst());
        assertEquals(Duration.ofDays(7), config.policy().auditRetention());

        CommandLine defaults = new CommandLine(new ServeCommand());
        defaults.parseArgs("--data", data.resolve("served").toString());
        HubConfig plain = ((ServeCommand) defaults.getCommand()).config();
        assertEquals(HubConfig.Gate.DEFAULTS, plain.gate());
        assertEquals(HubConfig.Policy.DEFAULTS, plain.policy());

        CliRun noPolicy = parley("serve", "--port", "0", "--data", data.resolve("served").toString(),
                "--policy", data.resolve("missing.json").toString());
        assertEquals(ExitStatus.REFUSED, noPolicy.exit, noPolicy::describe);
        assertTrue(noPolicy.err().startsWith("parley: serve_failed: "), noPolicy::describe);
        CliRun zeroRate = parley("serve", "--port", "0", "--data", data.resolve("served").toString(), "--rate", "0");
        assertEquals(ExitStatus.USAGE, zeroRate.exit, zeroRate::describe);
    }

    @Test
    void servingOnATakenPortFailsAndLeavesTheDataDirectoryFree() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Path served = data.resolve("taken-port");
            CliRun run = parley("serve", "--port", Integer.toString(taken.getLocalPort()), "--data", served.toString());
            assertFailure(run, ExitStatus.REFUSED, "serve_failed");
            assertTrue(run.err().contains("cannot listen on 127.0.0.1:" + taken.getLocalPort() + ": the port is taken"),
                    run::describe);
            // the failed start closed its store: a hub starts on the same data afterwards
            try (Hub next = Hub.start(HubConfig.defaults(served).withPort(0))) {
                assertTrue(next.url().matches("http://127\\.0\\.0\\.1:\\d+"), next.url());
            }
        }
    }

    @Test
    void unauthenticatedMcpNeedsAnExistingNodeAndItsHelpNamesTheRisk() {
        CliRun ghost = parley("serve", "--port", "0", "--data", data.resolve("conformance").toString(),
                "--mcp-unauthenticated-as", "ghost");
        assertEquals(ExitStatus.REFUSED, ghost.exit, ghost::describe);
        assertTrue(ghost.err().startsWith("parley: serve_failed: ") && ghost.err().contains("ghost")
                && ghost.err().contains("does not exist"), ghost::describe);
        CliRun help = parley("serve", "--help");
        assertEquals(0, help.exit, help::describe);
        String text = help.out().replaceAll("\\s+", " ");
        assertTrue(text.contains("--mcp-unauthenticated-as") && text.contains("anyone who can reach")
                && text.contains("must exist"), help::describe);
    }

    @Test
    void everyNewCommandHasHelp() {
        for (List<String> command : List.of(List.of("invite", "create"), List.of("join"), List.of("policy", "show"),
                List.of("policy", "check"), List.of("schema", "put"), List.of("schema", "show"), List.of("schema", "list"),
                List.of("schema", "rm"), List.of("audit"), List.of("limits", "set"), List.of("limits", "show"),
                List.of("limits", "reset"), List.of("keys", "rotate"), List.of("keys", "list"))) {
            String[] args = java.util.stream.Stream.concat(command.stream(), java.util.stream.Stream.of("--help"))
                    .toArray(String[]::new);
            CliRun help = parley(args);
            assertEquals(0, help.exit, help::describe);
            assertTrue(help.out().contains("Usage: parley " + String.join(" ", command)), help::describe);
        }
        CliRun group = parley("policy");
        assertEquals(ExitStatus.USAGE, group.exit, group::describe);
    }
}
