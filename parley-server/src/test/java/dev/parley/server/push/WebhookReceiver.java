package dev.parley.server.push;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.parley.core.WebhookSignature;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real HTTP endpoint for webhook tests. {@code answer} maps the 1-based number of the
 * request to the status to answer; {@link #HANG} holds the request until the receiver closes.
 * {@link #answered()} counts the requests answered so far.
 */
final class WebhookReceiver implements AutoCloseable {
    static final int HANG = -1;
    static final String SECRET = "a-test-secret-of-some-length";
    private static final Pattern FAILED = Pattern.compile("^attempt (\\d+) failed");

    /** One request as received. */
    record Hit(String eventId, int attempt, boolean signed, String body, long atNanos) {
    }

    private final HttpServer server;
    private final List<Hit> hits = new CopyOnWriteArrayList<>();
    private final CountDownLatch closing = new CountDownLatch(1);
    private final AtomicInteger answered = new AtomicInteger();

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
                    closing.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                status = 503;
            }
            answered.incrementAndGet();
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

    int answered() {
        return answered.get();
    }

    /**
     * Asserts that the pushes this receiver saw resumed across a stop of the hub without a loss
     * or a double: attempts 1 to {@code lastFailed} (each failed, its failure recorded), then
     * {@code lastFailed + 1}, which delivered. An attempt under way when the hub stopped has no
     * recorded outcome, so the hub makes it again: that one attempt may come twice, since
     * delivery is at least once. When the hub stopped cannot be chosen against the backoff's
     * jitter, so this is what a test may demand.
     */
    void assertResumedAfter(int lastFailed) {
        List<Integer> attempts = hits.stream().map(Hit::attempt).toList();
        List<Integer> once = new ArrayList<>(IntStream.rangeClosed(1, lastFailed + 1)
                .boxed().toList());
        List<Integer> repeated = new ArrayList<>(once);
        repeated.add(lastFailed + 1);
        assertTrue(attempts.equals(once) || attempts.equals(repeated),
                "attempts go 1, 2, … " + lastFailed + " (failed), then " + (lastFailed + 1) + ": " + attempts);
    }

    /** The highest attempt whose failure the hub recorded in an envelope's timeline ({@code GET /v1/messages/{id}}). */
    static int lastFailedAttempt(JsonNode status) {
        int last = 0;
        for (JsonNode step : status.get("timeline")) {
            Matcher m = FAILED.matcher(step.path("detail").asText());
            if (m.find()) {
                last = Math.max(last, Integer.parseInt(m.group(1)));
            }
        }
        return last;
    }

    @Override
    public void close() {
        closing.countDown();
        server.stop(0);
    }
}
