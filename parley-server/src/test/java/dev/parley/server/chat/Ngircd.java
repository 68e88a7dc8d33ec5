package dev.parley.server.chat;

import dev.parley.nats.testing.ServerProcess;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * A real IRC server (Debian's ngircd) for one test: in the foreground ({@code -n}) on a free
 * loopback port, from a configuration file in a directory the test owns, with no DNS, ident or
 * PAM lookups, and a connection password ({@link #PASSWORD}). Ready once it accepts a connection; stopped by its PID. {@link #kill()} and
 * {@link #restart()} keep the port and the configuration, as an operator restarting it would.
 */
final class Ngircd implements AutoCloseable {
    private static final List<String> BINARIES = List.of("/usr/sbin/ngircd", "/usr/local/sbin/ngircd",
            "/usr/bin/ngircd");

    /** The server's connection password: every client, the hub's bot too, gives it. */
    static final String PASSWORD = "parley-irc-test-pass";

    private final ServerProcess process;

    private Ngircd(ServerProcess process) {
        this.process = process;
    }

    /** Whether an ngircd binary is installed (a test that needs one skips, saying so, if not). */
    static boolean installed() {
        return find().isPresent();
    }

    static Ngircd start(Path dir) {
        Path binary = find().orElseThrow(() -> new IllegalStateException("ngircd is not installed (apt-get install ngircd)"));
        try {
            Files.createDirectories(dir);
            int port = ServerProcess.freePort();
            Path config = dir.resolve("ngircd.conf");
            Files.writeString(config, """
                    [Global]
                    \tName = irc.parley.test
                    \tInfo = Parley test server
                    \tAdminInfo1 = Parley tests
                    \tAdminInfo2 = loopback
                    \tAdminEMail = tests@parley.invalid
                    \tListen = 127.0.0.1
                    \tPorts = %d
                    \tMotdPhrase = "Parley test server"
                    \tPassword = %s
                    [Limits]
                    \tMaxNickLength = 30
                    [Options]
                    \tDNS = no
                    \tIdent = no
                    \tPAM = no
                    """.formatted(port, PASSWORD));
            // run as root, ngircd becomes "nobody" after reading it: keep it readable all the same
            config.toFile().setReadable(true, false);
            return new Ngircd(ServerProcess.start("ngircd", List.of(binary.toString(), "-n", "-f", config.toString()),
                    dir.resolve("ngircd.log"), port, "]:" + port + " (socket"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start ngircd", e);
        }
    }

    int port() {
        return process.port();
    }

    /** {@code host:port}, as an IRC platform names its server. */
    String server() {
        return "127.0.0.1:" + process.port();
    }

    String log() {
        return process.log();
    }

    /** SIGKILL by its PID: every client loses its connection without a word. */
    void kill() throws InterruptedException {
        process.kill();
    }

    /** Starts it again on the same port and configuration. */
    void restart() throws IOException {
        process.restart();
    }

    @Override
    public void close() throws InterruptedException {
        process.close();
    }

    private static Optional<Path> find() {
        return ServerProcess.find("ngircd", BINARIES);
    }
}
