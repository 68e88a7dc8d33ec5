package dev.parley.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.parley.bench.BenchHub;
import dev.parley.bench.ParleyServe;
import dev.parley.core.WebhookSignature;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Webhook pushes over https to real TLS endpoints, from {@code parley serve} in a child process
 * whose JVM trusts one test certificate (for {@code localhost}) and nothing else of the tests':
 * a push to an endpoint with a certificate the hub trusts for the host it names is delivered,
 * signed, twice in a row; a certificate for another name, or one nobody vouches for, is refused.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HttpsPushTest {
    private static final String PASSWORD = "changeit";
    private static final String SECRET = "an-https-test-secret-of-some-length";
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    static Path dir;

    private static BenchHub hub;
    private static Endpoint trusted;
    private static Endpoint stranger;
    private static String leadToken;

    /** A TLS endpoint answering 204 to every POST on /hook, and what it received. */
    private record Endpoint(HttpsServer server, List<Hit> hits) {
        int port() {
            return server.getAddress().getPort();
        }
    }

    private record Hit(String eventId, boolean signed, String body) {
    }

    @BeforeAll
    static void start() throws Exception {
        Path trustedStore = keyStore("trusted");
        Path strangerStore = keyStore("stranger");
        Path trust = dir.resolve("hub-trust.p12");
        keytool("-exportcert", "-alias", "trusted", "-keystore", trustedStore.toString(), "-storepass", PASSWORD,
                "-file", dir.resolve("trusted.cer").toString());
        keytool("-importcert", "-noprompt", "-alias", "trusted", "-file", dir.resolve("trusted.cer").toString(),
                "-keystore", trust.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
        trusted = endpoint(trustedStore);
        stranger = endpoint(strangerStore);
        hub = BenchHub.child(ParleyServe.of(Main.class), List.of(), Map.of(), List.of("-Djavax.net.ssl.trustStore=" + trust,
                "-Djavax.net.ssl.trustStorePassword=" + PASSWORD, "-Djavax.net.ssl.trustStoreType=PKCS12"), 0);
        leadToken = hub.createNode("lead", null);
    }

    @AfterAll
    static void stop() {
        if (hub != null) {
            hub.close();
        }
        for (Endpoint e : new Endpoint[] {trusted, stranger}) {
            if (e != null) {
                e.server().stop(0);
            }
        }
    }

    @Test
    void aPushToATrustedCertificateForItsHostIsDeliveredSignedAndAgain() throws Exception {
        hookedWorker("worker-trusted", "https://localhost:" + trusted.port() + "/hook");
        for (String text : List.of("first over tls", "second over tls")) {
            String id = send("worker-trusted", text);
            await().atMost(PATIENCE).until(() -> "delivered".equals(state(id)));
            Hit hit = trusted.hits().stream().filter(h -> id.equals(h.eventId())).findFirst().orElseThrow();
            assertTrue(hit.signed(), () -> "bad signature on " + hit);
            assertTrue(hit.body().contains(text), hit::body);
        }
    }

    @Test
    void aCertificateForAnotherNameIsRefused() throws Exception {
        // the certificate names localhost; the URL names the address it listens on
        refused("worker-by-address", "https://127.0.0.1:" + trusted.port() + "/hook", trusted);
    }

    @Test
    void aCertificateTheHubDoesNotTrustIsRefused() throws Exception {
        refused("worker-stranger", "https://localhost:" + stranger.port() + "/hook", stranger);
    }

    /** A push to {@code url} fails in the handshake: the attempt is recorded as failed and the endpoint saw no request. */
    private static void refused(String worker, String url, Endpoint endpoint) throws Exception {
        hookedWorker(worker, url);
        int before = endpoint.hits().size();
        String id = send(worker, "not for a stranger");
        // the first attempt's end, whichever way it went
        await().atMost(PATIENCE).until(() -> "delivered".equals(state(id)) || timeline(id).stream()
                .anyMatch(t -> t.path("state").asText().equals("retry_pending")));
        assertFalse("delivered".equals(state(id)), "a push through a refused handshake counted as delivered");
        String detail = timeline(id).stream().filter(t -> t.path("state").asText().equals("retry_pending"))
                .findFirst().orElseThrow().path("detail").asText();
        assertTrue(detail.contains("connection failed"), detail);
        assertEquals(before, endpoint.hits().size(), "the endpoint got a request over a refused handshake");
    }

    private static void hookedWorker(String id, String url) throws IOException {
        hub.createNode(id, "lead");
        hub.callExpect(200, "PUT", "/v1/nodes/" + id + "/delivery", CliRun.JSON.createObjectNode()
                .<com.fasterxml.jackson.databind.node.ObjectNode>set("webhook", CliRun.JSON.createObjectNode()
                        .put("url", url).put("secret", SECRET))
                .set("retry", CliRun.JSON.createObjectNode().put("maxAttempts", 10).put("baseMs", 5000)
                        .put("capMs", 5000)).toString());
    }

    private static String send(String to, String text) throws IOException {
        var res = hub.admin().call("POST", "/v1/messages", leadToken,
                CliRun.JSON.createObjectNode().put("to", to).put("kind", "message").put("text", text).toString());
        assertEquals(202, res.status(), res::body);
        return CliRun.JSON.readTree(res.body()).path("id").asText();
    }

    private static JsonNode status(String id) throws IOException {
        return CliRun.JSON.readTree(hub.callExpect(200, "GET", "/v1/messages/" + id, null));
    }

    private static String state(String id) throws IOException {
        return status(id).path("state").asText();
    }

    private static List<JsonNode> timeline(String id) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        status(id).path("timeline").forEach(out::add);
        return out;
    }

    /** A PKCS12 key store with one self-signed EC certificate for DNS name localhost, under {@code alias}. */
    private static Path keyStore(String alias) throws Exception {
        Path store = dir.resolve(alias + ".p12");
        keytool("-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                "-ext", "SAN=dns:localhost", "-validity", "2", "-keystore", store.toString(), "-storetype", "PKCS12",
                "-storepass", PASSWORD);
        return store;
    }

    private static Endpoint endpoint(Path keyStore) throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keyStore)) {
            keys.load(in, PASSWORD.toCharArray());
        }
        KeyManagerFactory managers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        managers.init(keys, PASSWORD.toCharArray());
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(managers.getKeyManagers(), null, null);
        // localhost resolves to the loopback address this listens on (/etc/hosts), as the hub's lookup does
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        List<Hit> hits = new CopyOnWriteArrayList<>();
        server.createContext("/hook", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            hits.add(new Hit(exchange.getRequestHeaders().getFirst("Parley-Event-Id"), WebhookSignature.verify(SECRET,
                    body, exchange.getRequestHeaders().getFirst(WebhookSignature.HEADER)),
                    new String(body, StandardCharsets.UTF_8)));
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.start();
        return new Endpoint(server, hits);
    }

    private static void keytool(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "keytool did not finish");
        assertEquals(0, p.exitValue(), () -> "keytool " + String.join(" ", args) + ":\n" + out);
    }
}
