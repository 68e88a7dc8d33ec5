package dev.parley.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An OTLP/HTTP receiver that takes every export and keeps nothing: each POST is read to its end
 * and answered 200 with an empty {@code ExportTraceServiceResponse} (zero bytes of protobuf), so
 * that the hub's exporter does its whole job (spans built, encoded, posted, acknowledged) at the
 * least cost to the receiving side, which shares the bench's JVM. Counts requests and body bytes.
 * Other methods are answered 405.
 */
final class OtlpSink implements AutoCloseable {
    private final HttpServer server;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();

    private OtlpSink(HttpServer server) {
        this.server = server;
    }

    /** Listens on 127.0.0.1 at a free port; one thread answers (the hub exports from one thread). */
    static OtlpSink start() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        OtlpSink sink = new OtlpSink(server);
        server.createContext("/", sink::answer);
        server.start();
        return sink;
    }

    private void answer(HttpExchange exchange) throws IOException {
        try (exchange; InputStream body = exchange.getRequestBody()) {
            long read = body.transferTo(OutputStream.nullOutputStream());
            if (!exchange.getRequestMethod().equals("POST")) {
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            requests.incrementAndGet();
            bytes.addAndGet(read);
            exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, -1); // no body: the empty response message
        }
    }

    /** The base URL to give as {@code OTEL_EXPORTER_OTLP_ENDPOINT}. */
    String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Exports answered so far. */
    long requests() {
        return requests.get();
    }

    /** Body bytes of the exports answered so far. */
    long bytes() {
        return bytes.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
