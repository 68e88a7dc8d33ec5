package dev.parley.server.chat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A TCP relay in front of the IRC server for the hub's bot only. The test cannot choose when
 * the bot reconnects; while the relay is held it hangs up on each attempt, so the test's own
 * people are on a restarted server before the bot is, and see what it posts as it comes back.
 * The server dropping drops the relayed connection too.
 */
final class Relay implements AutoCloseable {
    private final ServerSocket listener;
    private final int upstream;
    private final ExecutorService pumps = Executors.newVirtualThreadPerTaskExecutor();
    private volatile boolean held;

    Relay(int upstream) {
        this.upstream = upstream;
        try {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        pumps.execute(this::accept);
    }

    /** {@code host:port}, as the IRC platform names its server. */
    String server() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    void hold() {
        held = true;
    }

    void release() {
        held = false;
    }

    private void accept() {
        while (!listener.isClosed()) {
            Socket bot;
            try {
                bot = listener.accept();
            } catch (IOException e) {
                continue; // the relay is closed
            }
            try {
                if (held) {
                    bot.close();
                    continue;
                }
                Socket server = new Socket(InetAddress.getLoopbackAddress(), upstream);
                pump(bot, server);
                pump(server, bot);
            } catch (IOException e) {
                try {
                    bot.close(); // the server is down: the bot's attempt ends here
                } catch (IOException ignored) {
                    // closed already
                }
            }
        }
    }

    /** Copies one way until either side ends, then ends both, as a dropped connection does. */
    private void pump(Socket from, Socket to) {
        pumps.execute(() -> {
            try (from; to) {
                from.getInputStream().transferTo(to.getOutputStream());
            } catch (IOException e) {
                // one side ended: both are closed
            }
        });
    }

    @Override
    public void close() throws IOException {
        listener.close();
        pumps.shutdownNow();
    }
}
