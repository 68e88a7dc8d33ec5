package dev.parley.nats.testing;

import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** The fixture itself: a plain {@code nats-server -js} takes any client, keeps its store across a kill and restart, and stops by PID. */
class NatsServerTest {
    @TempDir
    Path tmp;

    @Test
    void aPlainJetStreamServerKeepsItsStoreAcrossAKillAndStopsByPid() throws Exception {
        NatsServer server = NatsServer.startJetStream(tmp);
        try (server) {
            try (Connection anyone = Nats.connect(server.url())) {
                anyone.jetStreamManagement().addStream(StreamConfiguration.builder().name("PARLEY_OUT_x")
                        .subjects("parley.out.x.>").storageType(StorageType.File).build());
                assertEquals(1, anyone.jetStream().publish("parley.out.x.y", new byte[0]).getSeqno());
            }
            server.kill();
            server.restart();
            try (Connection again = Nats.connect(server.url())) {
                assertEquals(2, again.jetStream().publish("parley.out.x.y", new byte[0]).getSeqno(),
                        "same port, same store: the stream and its record survived");
            }
        }
        assertFalse(ProcessHandle.of(server.pid()).map(ProcessHandle::isAlive).orElse(false));
    }
}
