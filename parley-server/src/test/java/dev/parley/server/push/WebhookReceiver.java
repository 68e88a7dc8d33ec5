package dev.parley.server.push;

import com.sun.net.httpserver.HttpServer;
import dev.parley.core.WebhookSignature;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;

/**
 * A real HTTP endpoint for webhook tests. {@code answer} maps the 1-based number of the
 * request to the status to answer; {@link #HANG} holds the request until the receiver closes.
 */
final class WebhookReceiver implements AutoCloseable {
    static final int HANG = -1;
    static final String SECRET = "a-test-secret-of-some-length";

    /** One request as received. */
    record Hit(String eventId, int attempt, boolean signed, String body, long atNanos) {
    }

    private final HttpServer server;
    private final List<Hit> hits = new CopyOnWriteArrayList<>();
    private final CountDownLatch closing = new CountDownLatch(1);

    WebhookReceiver(IntUnaryOperator answer) {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/hook", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            Hit hit = new Hit(exchange.getRequestHeaders().getFirst("Parley-Event-Id"),
                    Integer.parseInt(exchange.getRequestHeaders().getFirst("Parley-Attempt")),
                    WebhookSignature.verify(SECRET, body, exchange.getRequestHeaders().getFirst("Parley-Signature")),
                    new String(body, java.nio.charset.StandardCharsets.UTF_8), System.nanoTime());
            hits.add(hit);
            int status = answer.applyAsInt(hits.size());
            if (status == HANG) {
                try {
                    closing.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                status = 503;
            }
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
        });
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/hook";
    }

    List<Hit> hits() {
        return List.copyOf(hits);
    }

    @Override
    public void close() {
        closing.countDown();
        server.stop(0);
    }
}
