package dev.parley.nats.testing;

import dev.parley.nats.auth.GatewayCredentials;
import dev.parley.nats.auth.GatewayId;
import dev.parley.nats.auth.GatewayPermissions;
import io.nats.client.Connection;
import io.nats.client.ErrorListener;
import io.nats.client.JetStream;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamOptions;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A test's raw NATS connection as one gateway, recording the errors (permission violations) the server sends it. */
public final class GatewayConnection implements AutoCloseable {
    /** For calls expected to be refused: a refused request gets no answer, so keep its wait short. */
    public static final JetStreamOptions REFUSED = JetStreamOptions.builder().requestTimeout(Duration.ofMillis(750)).build();

    public final GatewayId gateway;
    public final Connection nats;
    /** What nats-server sent as -ERR, e.g. {@code Permissions Violation for Publish to "parley.out.b.x"}. */
    public final List<String> errors;

    private GatewayConnection(GatewayId gateway, Connection nats, List<String> errors) {
        this.gateway = gateway;
        this.nats = nats;
        this.errors = errors;
    }

    public static GatewayConnection connect(NatsServer server, GatewayCredentials credentials)
            throws IOException, InterruptedException {
        return connect(server, credentials.gateway(), Options.builder().authHandler(credentials.authHandler())
                .connectionTimeout(Duration.ofSeconds(10)));
    }

    public static GatewayConnection connect(NatsServer server, GatewayId gateway, Options.Builder options)
            throws IOException, InterruptedException {
        List<String> errors = new CopyOnWriteArrayList<>();
        Connection nats = Nats.connect(options.server(server.url()).noReconnect()
                .inboxPrefix(GatewayPermissions.inboxPrefix(gateway))
                .errorListener(new ErrorListener() {
                    @Override
                    public void errorOccurred(Connection conn, String error) {
                        errors.add(error);
                    }
                }).build());
        return new GatewayConnection(gateway, nats, errors);
    }

    public JetStream js() throws IOException {
        return nats.jetStream();
    }

    public JetStreamManagement jsm() throws IOException {
        return nats.jetStreamManagement();
    }

    public JetStreamManagement refusedJsm() throws IOException {
        return nats.jetStreamManagement(REFUSED);
    }

    /** Creates this gateway's outbox stream, as the gateway does at start. */
    public StreamInfo createOutbox() throws Exception {
        return jsm().addStream(StreamConfiguration.builder().name(GatewayPermissions.outboxStream(gateway))
                .subjects(GatewayPermissions.OUTBOX_SUBJECT_PREFIX + gateway + ".>").storageType(StorageType.File)
                .duplicateWindow(Duration.ofMinutes(2)).build());
    }

    /**
     * Publishes a forged record on {@code subject}, once through JetStream (which gets no
     * acknowledgement) and once as core NATS, and waits until nats-server has refused both.
     */
    public void assertPublishRefused(String subject) throws Exception {
        byte[] forged = "forged".getBytes(StandardCharsets.UTF_8);
        long before = violations("Publish", subject);
        assertThrows(Exception.class, () -> nats.jetStream(REFUSED).publish(subject, forged));
        await().atMost(Duration.ofSeconds(10)).until(() -> violations("Publish", subject) > before);
        nats.publish(subject, forged);
        await().atMost(Duration.ofSeconds(10)).until(() -> violations("Publish", subject) > before + 1);
    }

    /** Waits until nats-server has told this connection it refused {@code operation} on {@code subject}. */
    public void awaitViolation(String operation, String subject) {
        await().atMost(Duration.ofSeconds(10)).until(() -> violations(operation, subject) > 0);
    }

    private long violations(String operation, String subject) {
        return errors.stream()
                .filter(e -> e.contains("Permissions Violation for " + operation) && e.contains("\"" + subject + "\""))
                .count();
    }

    /** Fails if nats-server refused anything so far: the flush's round trip brings every earlier -ERR first. */
    public void assertNoErrors() throws Exception {
        nats.flush(Duration.ofSeconds(10));
        assertEquals(List.of(), errors, () -> gateway + " was refused something a gateway needs");
    }

    @Override
    public void close() throws InterruptedException {
        nats.close();
    }
}
