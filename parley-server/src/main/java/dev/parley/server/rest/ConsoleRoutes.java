package dev.parley.server.rest;

import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import dev.parley.server.http.Exchange;
import dev.parley.server.http.Routes;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * {@code /console}: the operator console's files, read once from the hub's jar. They hold no
 * data and need no token (a browser sends none when it loads a page); the pages call the
 * public {@code /v1} API with the token the operator typed, kept in session storage. Only the
 * files listed here are served, with a strict Content-Security-Policy: no inline script or
 * style, nothing from elsewhere.
 */
public final class ConsoleRoutes {
    private static final String OWN = "dev/parley/console/";
    private static final List<String> FILES = List.of("index.html", "console.css", "console.js", "api.js", "dom.js",
            "topology.js", "flow.js", "inboxes.js", "dead-letters.js", "audit.js", "agents.js", "traces.js",
            "charts.js");
    static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

    private record Asset(byte[] bytes, String type, String etag) {
    }

    private final Map<String, Asset> assets = new LinkedHashMap<>();

    public ConsoleRoutes() {
        FILES.forEach(name -> assets.put(name, asset(OWN + name)));
        // the two libraries, from their WebJars: the graph of the topology and the charts
        assets.put("lib/cytoscape.js", asset(webjar("cytoscape") + "dist/cytoscape.esm.min.mjs"));
        assets.put("lib/uplot.js", asset(webjar("uplot") + "dist/uPlot.esm.js"));
        assets.put("lib/uplot.css", asset(webjar("uplot") + "dist/uPlot.min.css"));
    }

    public void register(Routes routes) {
        routes.get("/console", ex -> { // relative links resolve under /console/; a #token=… fragment survives
            ex.answerHeader("Location", "/console/");
            ex.empty(301);
        })
                .get("/console/", ex -> serve(ex, "index.html"))
                .get("/console/{file}", ex -> serve(ex, ex.path("file")))
                .get("/console/lib/{file}", ex -> serve(ex, "lib/" + ex.path("file")));
    }

    private void serve(Exchange ex, String name) {
        Asset asset = assets.get(name);
        if (asset == null) {
            throw new ParleyException(ErrorCode.NOT_FOUND, "the console has no file " + name);
        }
        ex.answerHeader("Content-Security-Policy", CSP);
        ex.answerHeader("X-Content-Type-Options", "nosniff");
        ex.answerHeader("Referrer-Policy", "no-referrer");
        ex.answerHeader("Cache-Control", "no-cache"); // kept, but asked again: a new hub's files show at once
        ex.answerHeader("ETag", asset.etag());
        if (ex.header("If-None-Match").filter(asset.etag()::equals).isPresent()) {
            ex.empty(304);
            return;
        }
        ex.send(200, asset.type(), asset.bytes());
    }

    /** Where a WebJar's files are, by the version its own pom.properties names. */
    private static String webjar(String name) {
        Properties pom = new Properties();
        try (InputStream in = resource("META-INF/maven/org.webjars.npm/" + name + "/pom.properties")) {
            pom.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return "META-INF/resources/webjars/" + name + "/" + pom.getProperty("version") + "/";
    }

    private static Asset asset(String path) {
        try (InputStream in = resource(path)) {
            byte[] bytes = in.readAllBytes();
            String etag = "\"" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes), 0, 16) + "\"";
            return new Asset(bytes, type(path), etag);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static InputStream resource(String path) {
        InputStream in = ConsoleRoutes.class.getClassLoader().getResourceAsStream(path);
        if (in == null) {
            throw new IllegalStateException("the console file " + path + " is missing from the hub's jar");
        }
        return in;
    }

    private static String type(String path) {
        String extension = path.substring(path.lastIndexOf('.') + 1);
        return switch (extension) {
            case "html" -> "text/html; charset=utf-8";
            case "css" -> "text/css; charset=utf-8";
            case "js", "mjs" -> "text/javascript; charset=utf-8";
            default -> throw new IllegalStateException("no content type for " + path);
        };
    }
}
