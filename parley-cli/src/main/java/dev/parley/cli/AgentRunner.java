package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.TraceContext;
import dev.parley.core.Traces;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;
import dev.parley.trace.TraceEvents;

import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The agent protocol's reference runner ({@code parley agent run}, {@code parley agent claude}):
 * follows the node's inbox (every envelope not settled, then live ones and redeliveries), and
 * for each claims it, has its {@link Turn} work it while heartbeating (the tool the turn runs,
 * since when), and replies with what the turn answered (nothing: processed; a failure: failed).
 * Before it settles the envelope it posts the turn's trace to the hub ({@code POST
 * /v1/traces/{turn}/events}, the turn {@code <envelope id>.<n>}, n counting the envelope's claims);
 * a trace the hub does not take is noted, and the turn goes on. One envelope at a time, in order.
 */
final class AgentRunner {
    /** How often a claim, a reply or an ack is tried when the hub fails or cannot be reached. */
    private static final int ATTEMPTS = 5;
    /** Longest reason an ack carries (the hub's limit). */
    private static final int MAX_REASON = 2_000;
    /** How long the stream may stay silent (the hub writes a comment at least every 15 s) before it is opened again. */
    private static final Duration IDLE = Duration.ofSeconds(45);

    /** How the runner works: what works an envelope, how often it heartbeats, how long one turn may take. */
    record Settings(Turn turn, Duration heartbeat, Duration timeout, int maxMessages) {
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
                retrying(at + "/ack", status("processed"));
                return;
            }
            JsonNode meta = envelope.path("meta");
            boolean person = envelope.path("from").asText().startsWith("h-"); // chat meta counts on people's messages only
            if (person && "false".equals(meta.path("trigger").asText(null))) { // kept as context: no turn of its own
                retrying(at + "/ack", status("processed"));
                return;
            }
            Optional<JsonNode> claim = claim(at, id);
            if (claim.isEmpty()) {
                return;
            }
            JsonNode input = envelope;
            if (person && meta.has("chat.group")) { // a chat message: the turn reads its conversation, formatted by the hub
                ObjectNode withPrompt = envelope.deepCopy();
                withPrompt.put("text", client.get(at + "/prompt?max=" + settings.maxMessages()).path("prompt").asText());
                input = withPrompt;
            }
            Progress progress = new Progress(at, settings.turn().tool(), Instant.now());
            ScheduledFuture<?> beating = beats.scheduleAtFixedRate(progress::beat, 0,
                    settings.heartbeat().toMillis(), TimeUnit.MILLISECONDS);
            TraceBuilder trace = new TraceBuilder(Clock.systemUTC(), event -> { });
            // tries: how often the sweep took the envelope back, so a turn run again is a turn of its own
            String turn = id + "." + (claim.get().path("tries").asInt(0) + 1);
            // the turn's span, as the hub names it: what the turn sends, and its answer, are under it
            Optional<String> traceparent = TraceContext.parse(envelope.at("/trace/traceparent").asText(null))
                    .map(envelopeSpan -> envelopeSpan.child(Traces.TURN_SPAN + turn).traceparent());
            Turn.Outcome outcome;
            try {
                outcome = settings.turn().take(input, settings.timeout(), progress::toolStarted, trace, traceparent);
            } finally {
                progress.done = true; // no beat after the turn: the envelope is about to be settled
                beating.cancel(false);
            }
            postTrace(turn, id, trace.events());
            switch (outcome) {
                case Turn.Outcome.Output output when output.text().isBlank() -> retrying(at + "/ack", status("processed"));
                case Turn.Outcome.Output output -> reply(at, id, output.text(), traceparent);
                case Turn.Outcome.Failed failed -> fail(at, id, failed.why());
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
    private Optional<JsonNode> claim(String at, String id) throws InterruptedException {
        try {
            return Optional.of(retrying(at + "/claim", JsonTrees.object().put("timeoutMs",
                    settings.timeout().toMillis())));
        } catch (HubException e) {
            note("envelope " + id + " not claimed: " + e.code());
            return Optional.empty();
        }
    }

    /**
     * Posts a turn's events, at most {@link dev.parley.core.Traces#MAX_EVENTS_PER_CALL} a call, once each: a trace the hub
     * does not take is noted, never a reason to fail or delay the envelope.
     */
    private void postTrace(String turn, String envelopeId, List<TraceEvent> events) throws InterruptedException {
        String path = "/v1/traces/" + HubClient.segment(turn) + "/events";
        for (int from = 0; from < events.size(); from += dev.parley.core.Traces.MAX_EVENTS_PER_CALL) {
            ObjectNode body = JsonTrees.object().put("envelope", envelopeId)
                    .put("adapter", settings.turn().adapter());
            ArrayNode batch = body.putArray("events");
            events.subList(from, Math.min(events.size(), from + dev.parley.core.Traces.MAX_EVENTS_PER_CALL))
                    .forEach(event -> batch.add(TraceEvents.toJson(event)));
            try {
                retrying(path, body); // a repeat is safe: the hub takes an event it has once
            } catch (HubException e) {
                note("the trace of turn " + turn + " was not stored: " + e.code() + ": " + e.getMessage());
                return;
            }
        }
    }

    /**
     * Replies, under the turn's span ({@code traceparent}) when there is one; a reply the hub
     * refuses (the policy, a limit) fails the envelope, so it is not run again.
     */
    private void reply(String at, String id, String text, Optional<String> traceparent) throws InterruptedException {
        try {
            retrying(traceparent.map(client::traced).orElse(client), at + "/reply",
                    JsonTrees.object().put("text", text));
        } catch (HubException e) {
            if (e.retryable()) {
                throw e; // the hub still failing: the envelope stays claimed until the sweep takes it back
            }
            fail(at, id, "the reply was refused: " + e.code() + ": " + e.getMessage());
        }
    }

    private void fail(String at, String id, String why) throws InterruptedException {
        note("envelope " + id + " failed: " + why);
        retrying(at + "/ack", status("failed").put("reason", why.length() > MAX_REASON ? why.substring(0, MAX_REASON)
                : why));
    }

    /**
     * Posts, asking again (1, 2, 4, 8 s apart) while the hub fails, cannot be reached or
     * rate-limits: a claim, a reply or an ack lost to a passing failure would leave an envelope
     * unworked, or claimed until the sweep takes it back and runs its turn again.
     */
    private JsonNode retrying(String path, ObjectNode body) throws InterruptedException {
        return retrying(client, path, body);
    }

    private static JsonNode retrying(HubClient client, String path, ObjectNode body) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return client.post(path, body);
            } catch (HubException e) {
                if (!(e.retryable() || e.code().equals("rate_limited")) || attempt == ATTEMPTS) {
                    throw e;
                }
                Thread.sleep(1_000L << (attempt - 1));
            }
        }
    }

    /** The tool the turn runs now and since when, told to the hub with each heartbeat. */
    private final class Progress {
        private final String at;
        private volatile String tool;
        private volatile Instant since;

        Progress(String at, String tool, Instant since) {
            this.at = at;
            this.tool = tool;
            this.since = since;
        }

        /** Set once the turn is over: a beat still under way or scheduled is dropped. */
        volatile boolean done;

        /** The turn started a tool: the hub hears of it at once (from the beats' thread, never the turn's). */
        void toolStarted(String name) {
            tool = name;
            since = Instant.now();
            beats.execute(this::beat);
        }

        void beat() {
            if (done) {
                return;
            }
            try {
                client.post(at + "/heartbeat", JsonTrees.object().put("tool", tool)
                        .put("toolStartedAt", since.toString()).put("toolTimeoutMs", settings.timeout().toMillis()));
            } catch (HubException e) {
                note("heartbeat refused: " + e.code());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static ObjectNode status(String status) {
        return JsonTrees.object().put("status", status);
    }

    private void note(String line) {
        synchronized (log) {
            log.println("parley agent run: " + line);
            log.flush();
        }
    }
}
