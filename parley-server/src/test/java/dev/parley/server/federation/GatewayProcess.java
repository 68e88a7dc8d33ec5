package dev.parley.server.federation;

import dev.parley.nats.GatewayConfig;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import dev.parley.server.it.HubFixture;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A gateway in its own JVM, for tests that kill it with SIGKILL or run it in another network
 * namespace: {@code GatewayProcess <dataDir> <port> <adminToken> <gatewayId> <natsUrl> [host]}.
 */
public final class GatewayProcess {
    private GatewayProcess() {
    }

    public static void main(String[] args) throws InterruptedException {
        // Load tests pace their senders near the default node rate; a 429 is not what they test.
        HubConfig config = HubFixture.unthrottled(HubConfig.defaults(Path.of(args[0])));
        if (args.length > 5) {
            config = config.withHost(args[5]);
        }
        Hub hub = Hub.start(config.withPort(Integer.parseInt(args[1]))
                .withAdminToken(Optional.of(args[2]))
                .withGateway(Optional.of(new GatewayConfig(args[3], args[4], Optional.empty()))));
        hub.awaitClosed();
    }

    static Process spawn(Path dataDir, int port, String adminToken, String gateway, String natsUrl, Path log)
            throws IOException {
        return spawn(List.of(), dataDir, port, adminToken, gateway, natsUrl, "127.0.0.1", log);
    }

    /** Run behind {@code prefix} (e.g. {@code ip netns exec NS}), the hub listening on {@code host}. */
    static Process spawn(List<String> prefix, Path dataDir, int port, String adminToken, String gateway, String natsUrl,
                         String host, Path log) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), GatewayProcess.class.getName(), dataDir.toString(),
                Integer.toString(port), adminToken, gateway, natsUrl, host));
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
    }
}
