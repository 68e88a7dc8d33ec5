package dev.parley.nats.testing;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A child server counts as started by its own words, never by whoever answers on its port: a
 * crash test once talked to a stranger hub that had taken the port the test chose (it answered
 * 401 to every token), while its own child had failed to bind and exited.
 */
class ServerProcessTest {
    @TempDir
    Path tmp;

    @Test
    void aChildThatExitsIsNotMistakenForTheStrangerOnItsPort() throws Exception {
        try (ServerSocket stranger = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int port = stranger.getLocalPort();
            try (Socket probe = new Socket(InetAddress.getLoopbackAddress(), port)) {
                assertTrue(probe.isConnected(), "the port answers, as a stranger's does");
            }
            Path log = tmp.resolve("child.log");
            // the child a port taken before it binds leaves behind: it says why and exits
            Process child = new ProcessBuilder("sh", "-c", "echo 'cannot bind: address already in use'; exit 3")
                    .redirectErrorStream(true).redirectOutput(log.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            IllegalStateException failed = assertThrows(IllegalStateException.class, () ->
                    ServerProcess.awaitAnnounced(child, log, 0, "listening on http://127.0.0.1:" + port + " ",
                            Duration.ofSeconds(30)));
            assertTrue(failed.getMessage().contains("exited with 3"), failed.getMessage());
            assertTrue(failed.getMessage().contains("address already in use"), failed.getMessage());
        }
    }

    @Test
    void aChildIsStartedOnceItsOwnLogSaysSoAfterTheLinesOfEarlierRuns() throws Exception {
        Path log = tmp.resolve("restarts.log");
        String line = "listening on http://127.0.0.1:4999 ";
        Files.writeString(log, "an earlier run: " + line + "\n");
        long from = ServerProcess.logSize(log);
        Process child = new ProcessBuilder("sh", "-c", "sleep 0.3; echo '" + line + "'; sleep 30")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        try {
            ServerProcess.awaitAnnounced(child, log, from, line, Duration.ofSeconds(30));
            List<String> lines = Files.readAllLines(log);
            assertTrue(lines.size() == 2 && lines.get(1).equals(line), "returned only after the child's own line: " + lines);
        } finally {
            child.destroyForcibly().waitFor();
        }
    }

    @Test
    void aChosenPortLiesWhereNoOutgoingConnectionCanTakeIt() throws Exception {
        // the interleaving that failed a busy run: any outgoing connection's local port comes from
        // the ephemeral range, and while it is open a server cannot bind that port
        try (ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             Socket outgoing = new Socket(InetAddress.getLoopbackAddress(), listener.getLocalPort());
             ServerSocket late = new ServerSocket()) {
            int taken = outgoing.getLocalPort();
            assertTrue(taken >= 32_768, "an outgoing connection's port: " + taken);
            assertThrows(BindException.class, () -> late.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    taken)));
        }
        for (int i = 0; i < 50; i++) {
            int port = ServerProcess.freePort();
            assertTrue(port >= 10_000 && port < 32_768, "below the ephemeral range: " + port);
            try (ServerSocket server = new ServerSocket()) {
                server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)); // free indeed
            }
        }
    }
}
