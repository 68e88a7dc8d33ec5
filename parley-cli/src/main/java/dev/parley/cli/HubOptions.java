package dev.parley.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * The options every client command shares: which hub, as whom, and in which output form.
 * Options win over the environment, which lets tests and scripts talk to several hubs at once.
 */
public final class HubOptions {
    static final String DEFAULT_URL = "http://127.0.0.1:7420";

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--url", paramLabel = "URL", defaultValue = "${env:PARLEY_URL:-" + DEFAULT_URL + "}",
            description = {"Hub base URL.", "Default: env PARLEY_URL, else " + DEFAULT_URL + "."})
    String url;

    // No ${DEFAULT-VALUE} in the description: --help must never print the secret.
    @Option(names = "--token", paramLabel = "TOKEN", defaultValue = "${env:PARLEY_TOKEN}",
            description = {"Bearer token of the node (or admin) to act as.", "Default: env PARLEY_TOKEN."})
    String token;

    @Option(names = "--json", description = "Print the hub's JSON answer instead of the readable form.")
    boolean json;

    boolean json() {
        return json;
    }

    /**
     * A client for the chosen hub, acting as the token's holder when {@code authenticated},
     * else sending no token at all (the admission handshake, which a newcomer runs without one).
     * A URL that is not http(s) is a usage error.
     */
    HubClient connect(boolean authenticated) {
        URI hub;
        try {
            hub = new URI(url);
        } catch (URISyntaxException e) {
            throw new ParameterException(mixee.commandLine(), "--url: not a URL: " + url);
        }
        if (!("http".equals(hub.getScheme()) || "https".equals(hub.getScheme())) || hub.getHost() == null) {
            throw new ParameterException(mixee.commandLine(), "--url must be http://host:port, got: " + url);
        }
        if (!authenticated) {
            return new HubClient(hub, null);
        }
        if (token == null || token.isBlank()) {
            throw HubException.noToken();
        }
        return new HubClient(hub, token.strip());
    }
}
