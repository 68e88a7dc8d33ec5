package dev.parley.cli;

import static dev.parley.cli.CliRun.addNode;
import static dev.parley.cli.CliRun.as;
import static dev.parley.cli.CliRun.assertFailure;
import static dev.parley.cli.CliRun.parley;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.nats.GatewayConfig;
import dev.parley.nats.testing.NatsServer;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code parley gateway list|status} against real gateways joined through a real nats-server. */
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
        }
    }

    @Test
    void aHubThatIsNoGatewaySaysSo() {
        try (Hub single = Hub.start(HubConfig.defaults(tmp.resolve("single")).withPort(0))) {
            CliRun run = parley(as(single, single.adminToken(), "gateway", "status"));
            assertFailure(run, ExitStatus.NOT_FOUND, "not_found");
            assertTrue(run.err().contains("this hub is not a gateway"), run::describe);
        }
    }
}
