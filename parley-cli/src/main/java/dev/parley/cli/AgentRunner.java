package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The agent protocol's reference runner ({@code parley agent run}): follows the node's inbox
 * (every envelope not settled, then live ones and redeliveries), and for each claims it, runs
 * a command with its text on stdin while heartbeating, and replies with the command's stdout
 * (none: processed; a failing status or a timeout: failed). One envelope at a time, in order.
 */
final class AgentRunner {
    /** Most bytes of a command's stdout taken as its reply; more fails the envelope (as the hub's command runner). */
    static final int MAX_REPLY_BYTES = 256 * 1024;
    /** How often a claim is tried when the hub fails or cannot be reached. */
    private static final int CLAIM_ATTEMPTS = 5;
    /** Longest reason an ack carries (the hub's limit). */
    private static final int MAX_REASON = 2_000;
    /** How long the stream may stay silent (the hub writes a comment at least every 15 s) before it is opened again. */
    private static final Duration IDLE = Duration.ofSeconds(45);

    /** How the runner works: the command, how often it heartbeats, how long one run may take. */
    record Settings(List<String> command, Duration heartbeat, Duration timeout) {
    }

    private final HubClient client;
    private final Settings settings;
    private final PrintWriter log;
    private final ScheduledExecutorService beats = Executors.newSingleThreadScheduledExecutor(
            Thread.ofVirtual().name("parley-heartbeat").factory());

    AgentRunner(HubClient client, Settings settings, PrintWriter log) {
        this.client = client;
        this.settings = settings;
        this.log = log;
    }

    /** Works the inbox until interrupted. */
    void run() throws InterruptedException {
        try {
            new InboxFollower(client, IDLE).follow(this::take);
        } finally {
            beats.shutdownNow();
        }
    }

    private void take(JsonNode envelope) {
        String id = envelope.path("id").asText();
        String at = "/v1/messages/" + id;
        try {
            if ("parley".equals(envelope.path("from").asText())) { // the hub's notices: noted, not worked on
                note("hub notice " + envelope.path("kind").asText() + ": " + envelope.path("text").asText(""));
                client.post(at + "/ack", status("processed"));
                return;
            }
            if (!claim(at, id)) {
                return;
            }
            String tool = settings.command().getFirst();
            Instant since = Instant.now();
            ScheduledFuture<?> beating = beats.scheduleAtFixedRate(() -> heartbeat(at, tool, since), 0,
                    settings.heartbeat().toMillis(), TimeUnit.MILLISECONDS);
            Outcome outcome;
            try {
                outcome = runCommand(envelope);
            } finally {
                beating.cancel(false);
            }
            switch (outcome) {
                case Outcome.Output output when output.text().isBlank() -> client.post(at + "/ack", status("processed"));
                case Outcome.Output output -> reply(at, id, output.text());
                case Outcome.Failed failed -> fail(at, id, failed.why());
            }
        } catch (HubException e) {
            note("envelope " + id + ": " + e.code() + ": " + e.getMessage() + " (it comes again while unsettled)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Claims the envelope; false when it is not to be worked on now: settled, or waiting out a
     * backoff (it is delivered again then). A hub that fails or cannot be reached is asked again,
     * a few times, so an envelope is not left unclaimed and undelivered.
     */
    private boolean claim(String at, String id) throws InterruptedException {
        ObjectNode body = HubClient.JSON.createObjectNode().put("timeoutMs", settings.timeout().toMillis());
        for (int attempt = 1; ; attempt++) {
            try {
                client.post(at + "/claim", body);
                return true;
            } catch (HubException e) {
                if (!(e.retryable() || e.code().equals("rate_limited")) || attempt == CLAIM_ATTEMPTS) {
                    note("envelope " + id + " not claimed: " + e.code());
                    return false;
                }
                Thread.sleep(1_000L << (attempt - 1));
            }
        }
    }

    /** Replies; a reply the hub refuses (the policy, a limit) fails the envelope, so it is not run again. */
    private void reply(String at, String id, String text) throws InterruptedException {
        try {
            client.post(at + "/reply", HubClient.JSON.createObjectNode().put("text", text));
        } catch (HubException e) {
            if (e.retryable()) {
                throw e; // the hub failing: the envelope stays claimed, and comes again once the sweep takes it back
            }
            fail(at, id, "the reply was refused: " + e.code() + ": " + e.getMessage());
        }
    }

    private void fail(String at, String id, String why) throws InterruptedException {
        note("envelope " + id + " failed: " + why);
        client.post(at + "/ack", status("failed").put("reason", why.length() > MAX_REASON
                ? why.substring(0, MAX_REASON) : why));
    }

    private void heartbeat(String at, String tool, Instant since) {
        try {
            client.post(at + "/heartbeat", HubClient.JSON.createObjectNode().put("tool", tool)
                    .put("toolStartedAt", since.toString()).put("toolTimeoutMs", settings.timeout().toMillis()));
        } catch (HubException e) {
            note("heartbeat refused: " + e.code());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Outcome runCommand(JsonNode envelope) throws InterruptedException {
        byte[] prompt = (envelope.hasNonNull("text") ? envelope.get("text").asText()
                : envelope.path("data").toString()).getBytes(StandardCharsets.UTF_8);
        Process process;
        try {
            ProcessBuilder builder = new ProcessBuilder(settings.command()).redirectError(ProcessBuilder.Redirect.INHERIT);
            // The command reads text from others: it must not act as the node with the runner's token.
            builder.environment().remove("PARLEY_TOKEN");
            process = builder.start();
        } catch (IOException e) {
            return new Outcome.Failed("the command cannot be started: " + e.getMessage());
        }
        try {
            CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> readUpTo(process.getInputStream()),
                    Thread::startVirtualThread);
            Thread.startVirtualThread(() -> write(process.getOutputStream(), prompt));
            if (!process.waitFor(settings.timeout().toMillis(), TimeUnit.MILLISECONDS)) {
                return new Outcome.Failed("timed out after " + dev.parley.core.DurationText.format(settings.timeout()));
            }
            byte[] stdout = out.get(settings.timeout().toMillis(), TimeUnit.MILLISECONDS);
            if (stdout.length > MAX_REPLY_BYTES) {
                return new Outcome.Failed("the command wrote more than " + MAX_REPLY_BYTES + " bytes");
            }
            return process.exitValue() == 0
                    ? new Outcome.Output(new String(stdout, StandardCharsets.UTF_8).stripTrailing())
                    : new Outcome.Failed("the command exited with status " + process.exitValue());
        } catch (ExecutionException | TimeoutException e) {
            return new Outcome.Failed("its output could not be read");
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }

    private static byte[] readUpTo(InputStream in) {
        try (in) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                out.write(buffer, 0, Math.min(n, Math.max(0, MAX_REPLY_BYTES + 1 - out.size())));
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void write(OutputStream stdin, byte[] prompt) {
        try (stdin) {
            stdin.write(prompt);
        } catch (IOException ignored) {
            // the command closed its stdin early: it answers from what it read
        }
    }

    private static ObjectNode status(String status) {
        return HubClient.JSON.createObjectNode().put("status", status);
    }

    private void note(String line) {
        synchronized (log) {
            log.println("parley agent run: " + line);
            log.flush();
        }
    }

    private sealed interface Outcome {
        record Output(String text) implements Outcome {
        }

        record Failed(String why) implements Outcome {
        }
    }
}
