package dev.parley.trace.testing;

import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A real OTLP/HTTP receiver on a free loopback port: it decodes each request body with the
 * official OTLP protobuf classes and keeps it with its path and headers. With {@link #hold()} it
 * takes a request and does not answer until released, as a stalled collector would.
 */
public final class OtlpReceiver implements AutoCloseable {
    public record Received(String path, String authorization, String contentType, ExportTraceServiceRequest body) {
    }

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    public final List<Received> requests = new CopyOnWriteArrayList<>();
    public final CountDownLatch arrived = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile boolean holding;

    public OtlpReceiver() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(threads);
        server.createContext("/", exchange -> {
            try (exchange; InputStream in = exchange.getRequestBody()) {
                ExportTraceServiceRequest body = ExportTraceServiceRequest.parseFrom(in.readAllBytes());
                requests.add(new Received(exchange.getRequestURI().getPath(),
                        exchange.getRequestHeaders().getFirst("Authorization"),
                        exchange.getRequestHeaders().getFirst("Content-Type"), body));
                arrived.countDown();
                if (holding) {
                    released.await();
                }
                byte[] answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
                exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
                exchange.sendResponseHeaders(200, answer.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(answer);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        server.start();
    }

    /** Answers no request until {@link #release()}. */
    public OtlpReceiver hold() {
        holding = true;
        return this;
    }

    public void release() {
        released.countDown();
    }

    public String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public List<Span> spans() {
        return requests.stream().flatMap(r -> r.body().getResourceSpansList().stream())
                .flatMap(rs -> rs.getScopeSpansList().stream()).flatMap(ss -> ss.getSpansList().stream()).toList();
    }

    public List<ResourceSpans> resourceSpans() {
        return requests.stream().flatMap(r -> r.body().getResourceSpansList().stream()).toList();
    }

    public List<ScopeSpans> scopeSpans() {
        return resourceSpans().stream().flatMap(rs -> rs.getScopeSpansList().stream()).toList();
    }

    @Override
    public void close() {
        release();
        server.stop(0);
        threads.shutdownNow();
    }
}
