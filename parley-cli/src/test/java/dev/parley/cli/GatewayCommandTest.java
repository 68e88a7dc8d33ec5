package dev.parley.cli;

import static dev.parley.cli.CliRun.addNode;
import static dev.parley.cli.CliRun.as;
import static dev.parley.cli.CliRun.assertFailure;
import static dev.parley.cli.CliRun.parley;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.nats.GatewayConfig;
import dev.parley.nats.testing.NatsServer;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code parley gateway init|invite|join|list|status} against real gateways joined through a
 * real nats-server: the one {@code init} configures, trusting only the federation's operator.
 */
class GatewayCommandTest {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private Hub gateway(String id, NatsServer nats) {
        return Hub.start(HubConfig.defaults(tmp.resolve("hub-" + id)).withPort(0)
                .withGateway(Optional.of(new GatewayConfig(id, nats.url(), Optional.empty()))));
    }

    @Test
    void gatewaysListEachOtherForTheAdmin() throws Exception {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats")); Hub a = gateway("a", nats);
             Hub b = gateway("b", nats)) {
            await().atMost(PATIENCE).until(() -> {
                JsonNode list = parley(as(a, a.adminToken(), "gateway", "list", "--json")).json().path("gateways");
                return list.size() == 2 && list.get(1).path("present").asBoolean();
            });
            JsonNode list = parley(as(a, a.adminToken(), "gateway", "list", "--json")).json();
            assertEquals("a", list.path("gateway").asText());
            JsonNode self = list.path("gateways").get(0);
            assertEquals("a", self.path("id").asText());
            assertTrue(self.path("self").asBoolean());
            assertTrue(self.path("cursor").isNull(), "no cursor on itself");
            JsonNode other = list.path("gateways").get(1);
            assertEquals("b", other.path("id").asText());
            assertTrue(!other.path("version").asText().isEmpty(), list::toString);

            CliRun table = parley(as(a, a.adminToken(), "gateway", "list"));
            assertEquals(ExitStatus.OK, table.exit, table::describe);
            assertTrue(table.out().lines().anyMatch(l -> l.startsWith("a (this)") && l.contains("true")), table.out());
            assertTrue(table.out().lines().anyMatch(l -> l.startsWith("b ") && l.contains("true")), table.out());

            JsonNode status = parley(as(b, b.adminToken(), "gateway", "status", "--json")).json();
            assertEquals("b", status.path("gateway").asText());
            assertEquals("connected", status.path("mode").asText());
            assertEquals(0, status.path("spoolDepth").asLong());

            String node = addNode(a, "lead");
            assertFailure(parley(as(a, node, "gateway", "list")), ExitStatus.FORBIDDEN, "forbidden");

            CliRun routed = parley(as(a, a.adminToken(), "node", "routing", "lead", "--fallback", "b"));
            assertEquals(ExitStatus.OK, routed.exit, routed::describe);
            assertTrue(routed.out().lines().anyMatch(l -> l.matches("fallbacks\\s+b")), routed.out());
            await().atMost(PATIENCE).until(() -> parley(as(b, b.adminToken(), "node", "routing", "lead", "--json"))
                    .json().path("fallbacks").toString().equals("[\"b\"]"));
            assertEquals("a", parley(as(b, b.adminToken(), "node", "routing", "lead", "--json")).json().path("owner")
                    .asText());
            assertFailure(parley(as(b, b.adminToken(), "node", "routing", "lead", "--clear")), ExitStatus.FORBIDDEN,
                    "forbidden");
            CliRun both = parley(as(a, a.adminToken(), "node", "routing", "lead", "--clear", "--fallback", "b"));
            assertEquals(ExitStatus.USAGE, both.exit, both::describe);
            assertTrue(both.err().contains("--clear and --fallback do not go together"), both::describe);
            CliRun cleared = parley(as(a, a.adminToken(), "node", "routing", "lead", "--clear", "--json"));
            assertEquals("[]", cleared.json().path("fallbacks").toString(), cleared::describe);
        }
    }

    @Test
    void aHubThatIsNoGatewaySaysSo() {
        try (Hub single = Hub.start(HubConfig.defaults(tmp.resolve("single")).withPort(0))) {
            CliRun run = parley(as(single, single.adminToken(), "gateway", "status"));
            assertFailure(run, ExitStatus.NOT_FOUND, "not_found");
            assertTrue(run.err().contains("this hub is not a gateway"), run::describe);
            addNode(single, "lead");
            CliRun routing = parley(as(single, single.adminToken(), "node", "routing", "lead", "--fallback", "b"));
            assertFailure(routing, ExitStatus.NOT_FOUND, "not_found");
            assertTrue(routing.err().contains("this hub is not a gateway"), routing::describe);
        }
    }

    /** The operator's whole path: init on a's machine, nats-server on init's configuration, invite, join, start b. */
    @Test
    void initInviteAndJoinMakeAFederationOnMintedCredentials() throws Exception {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
        Path dataA = tmp.resolve("hub-a");
        Path conf = tmp.resolve("nats-server.conf");
        Path aCreds = tmp.resolve("a.creds");
        CliRun init = parley("gateway", "init", "--gateway", "a", "--data", dataA.toString(), "--nats-store",
                tmp.resolve("nats-store").toString(), "--conf", conf.toString(), "--creds", aCreds.toString());
        assertEquals(ExitStatus.OK, init.exit, init::describe);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(aCreds)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dataA.resolve(
                "nats-authority"))));
        assertFalse(Files.readString(dataA.resolve("nats-authority")).contains("operator"), "the authority is sealed");

        // init again: refused, and nothing it would write is touched
        String before = Files.readString(dataA.resolve("nats-authority"));
        CliRun again = parley("gateway", "init", "--gateway", "a", "--data", dataA.toString(), "--nats-store",
                tmp.resolve("nats-store").toString(), "--conf", tmp.resolve("other.conf").toString(), "--creds",
                tmp.resolve("other.creds").toString());
        assertEquals(ExitStatus.CONFLICT, again.exit, again::describe);
        assertTrue(again.err().contains("already holds a NATS authority"), again::describe);
        assertEquals(before, Files.readString(dataA.resolve("nats-authority")));
        assertFalse(Files.exists(tmp.resolve("other.conf")) || Files.exists(tmp.resolve("other.creds")),
                "a refused init writes nothing");

        // init's configuration, on a free port instead of its listen line
        String trust = Files.readString(conf).lines().filter(l -> !l.startsWith("listen:"))
                .collect(Collectors.joining("\n"));
        try (NatsServer nats = NatsServer.start(tmp.resolve("nats"), store -> trust);
             Hub a = Hub.start(HubConfig.defaults(dataA).withPort(0).withGateway(Optional.of(
                     new GatewayConfig("a", nats.url(), Optional.of(aCreds)))))) {
            JsonNode invite = parley(as(a, a.adminToken(), "gateway", "invite", "b", "--ttl", "600", "--json")).json();
            String token = invite.path("inviteToken").asText();
            Path bCreds = tmp.resolve("b.creds");
            CliRun join = parley(as(a, "", "gateway", "join", "--invite", token, "--creds", bCreds.toString()));
            assertEquals(ExitStatus.OK, join.exit, join::describe);
            assertFalse(join.out().contains("SEED"), "the seed goes to the file only: " + join.out());
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(bCreds)));
            assertFailure(parley(as(a, "", "gateway", "join", "--invite", token, "--creds",
                    tmp.resolve("b2.creds").toString())), ExitStatus.CONFLICT, "token_already_used");
            assertFalse(Files.exists(tmp.resolve("b2.creds")));

            try (Hub b = Hub.start(HubConfig.defaults(tmp.resolve("hub-b")).withPort(0).withGateway(Optional.of(
                    new GatewayConfig("b", nats.url(), Optional.of(bCreds)))))) {
                await().atMost(PATIENCE).until(() -> {
                    JsonNode list = parley(as(a, a.adminToken(), "gateway", "list", "--json")).json().path("gateways");
                    return list.size() == 2 && list.get(1).path("present").asBoolean();
                });
                assertEquals("b", parley(as(b, b.adminToken(), "gateway", "status", "--json")).json()
                        .path("gateway").asText());
                assertFalse(nats.log().contains("Violation"), nats::log);

                // b's credentials revoked on a's machine: the running server closes b out, and refuses it again
                Matcher user = Pattern.compile("\\bU[A-Z2-7]{55}\\b").matcher(join.out());
                assertTrue(user.find(), join.out());
                assertEquals(ExitStatus.USAGE, parley("gateway", "revoke", "Unot-a-key", "--data", dataA.toString()).exit);
                assertEquals(ExitStatus.NOT_FOUND, parley("gateway", "revoke", user.group(), "--data",
                        tmp.resolve("hub-b").toString()).exit, "b holds no authority");
                String preloaded = Files.readString(conf);
                CliRun revoke = parley("gateway", "revoke", user.group(), "--data", dataA.toString(), "--conf",
                        conf.toString(), "--nats", nats.url());
                assertEquals(ExitStatus.OK, revoke.exit, revoke::describe);
                await().atMost(PATIENCE).until(() -> parley(as(b, b.adminToken(), "gateway", "status", "--json"))
                        .json().path("mode").asText().equals("spooling"));
                assertThrows(Exception.class, () -> Nats.connect(Options.builder().server(nats.url()).noReconnect()
                        .authHandler(Nats.credentials(bCreds.toString())).build()).close(), "b's creds are refused");
                assertEquals("connected", parley(as(a, a.adminToken(), "gateway", "status", "--json")).json()
                        .path("mode").asText(), "a's are not");
                assertNotEquals(preloaded, Files.readString(conf), "the configuration preloads the revocation");
                assertEquals(preloaded.lines().count(), Files.readString(conf).lines().count());
            }
        }
    }
}
