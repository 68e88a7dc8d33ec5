package dev.parley.server.metrics;

import dev.parley.core.Appended;
import dev.parley.core.SendOutcome;
import dev.parley.core.ErrorCode;
import dev.parley.core.ParleyException;
import dev.parley.core.Chats;
import dev.parley.core.TaskState;
import dev.parley.store.CommitObserver;

import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.List;
import java.util.function.Supplier;

/** The hub's counters and gauges, rendered in the Prometheus text format. */
public final class Metrics implements CommitObserver {
    final LongAdder sendsAccepted = new LongAdder();
    final LongAdder sendsDuplicate = new LongAdder();
    final LongAdder sendsDenied = new LongAdder();
    public final LongAdder slowReadersDisconnected = new LongAdder();
    private volatile IntSupplier openStreams = () -> 0;
    /** Envelopes a live message flow (the console's) dropped for a follower that fell behind. */
    public final LongAdder flowDropped = new LongAdder();

    // Delivery after acceptance: pushes, retries, redeliveries, dead letters, missed deadlines.
    public final LongAdder pushes = new LongAdder();
    public final LongAdder retries = new LongAdder();
    public final LongAdder redeliveries = new LongAdder();
    public final LongAdder deadLetters = new LongAdder();
    public final LongAdder incidents = new LongAdder();
    // The sweep of the agent protocol's claims.
    public final LongAdder claimsReset = new LongAdder();
    public final LongAdder claimsGivenUp = new LongAdder();
    public final LongAdder sweepKills = new LongAdder();
    // Scheduled sends: occurrences fired, and those refused when they came.
    public final LongAdder schedulesFired = new LongAdder();
    public final LongAdder schedulesSkipped = new LongAdder();
    // Federation: envelopes published again because their owner did not confirm them, and given up on.
    public final LongAdder republished = new LongAdder();
    public final LongAdder unconfirmed = new LongAdder();
    public final LongAdder unowned = new LongAdder();

    private final LongAdder committedJobs = new LongAdder();
    private final Histogram commitLatency = new Histogram("parley_commit_latency_seconds",
            "Time to run and sync one group commit.");
    private final Histogram foldLatency = new Histogram("parley_fold_latency_seconds",
            "Time the writer spent on one fold of new envelopes' entries into the audit log;"
                    + " writes queued meanwhile waited for it.");
    private final Histogram pushLatency = new Histogram("parley_push_latency_seconds",
            "Time from the start of a webhook POST to its answer.");
    private volatile LongSupplier backlog = () -> 0;
    private volatile LongSupplier pushesInFlight = () -> 0;

    public void backlogFrom(LongSupplier source) {
        this.backlog = source;
    }

    /** Webhook pushes under way, as the dispatcher counts them: running, or waiting for a push permit. */
    public void pushesInFlightFrom(LongSupplier source) {
        this.pushesInFlight = source;
    }

    @Override
    public void committed(int jobs, long nanos) {
        committedJobs.add(jobs);
        commitLatency.observe(nanos);
    }

    @Override
    public void upkept(long nanos) {
        foldLatency.observe(nanos);
    }

    /** Runs a send (or reply) and counts what became of it: accepted, a duplicate, or refused for its target. */
    public Appended send(Supplier<Appended> send) {
        Appended appended = refusalsCounted(send);
        (appended.duplicate() ? sendsDuplicate : sendsAccepted).increment();
        return appended;
    }

    /** Counts what became of each send of a batch, as {@link #send} counts one. */
    public List<SendOutcome> batch(List<SendOutcome> outcomes) {
        for (SendOutcome outcome : outcomes) {
            switch (outcome) {
                case SendOutcome.Sent sent -> (sent.appended().duplicate() ? sendsDuplicate : sendsAccepted).increment();
                case SendOutcome.Refused refused -> {
                    if (denial(refused.refusal())) {
                        sendsDenied.increment();
                    }
                }
            }
        }
        return outcomes;
    }

    /**
     * Runs whatever sends to a target on a caller's behalf (a message, a task, an A2A message)
     * and counts it in {@code parley_sends_denied_total} when the access decision denied it or
     * the target does not exist: one counter for every surface.
     */
    public <T> T refusalsCounted(Supplier<T> send) {
        try {
            return send.get();
        } catch (ParleyException e) {
            if (denial(e)) {
                sendsDenied.increment();
            }
            throw e;
        }
    }

    /** A refusal for its target: the access decision denied it, or the target does not exist. */
    private static boolean denial(ParleyException e) {
        return e.code() == ErrorCode.ACL_DENIED || e.code() == ErrorCode.NODE_NOT_FOUND;
    }

    public void pushLatency(Instant started, Instant answered) {
        pushLatency.observe(Duration.between(started, answered).toNanos());
    }

    public String render() {
        StringBuilder out = new StringBuilder(4096);
        counter(out, "parley_sends_accepted_total", "Envelopes accepted (committed) from sends and replies.",
                sendsAccepted.sum());
        counter(out, "parley_sends_duplicate_total", "Sends answered from an earlier messageId without a new envelope.",
                sendsDuplicate.sum());
        counter(out, "parley_sends_denied_total", "Sends refused by the ACL or for an unknown target (messages,"
                        + " replies, tasks, A2A and MCP).",
                sendsDenied.sum());
        counter(out, "parley_slow_readers_disconnected_total", "Streams cut because a write stayed blocked too long.",
                slowReadersDisconnected.sum());
        counter(out, "parley_pushes_total", "Webhook pushes answered 2xx.", pushes.sum());
        counter(out, "parley_push_retries_total", "Webhook pushes that failed and were rescheduled.", retries.sum());
        counter(out, "parley_redeliveries_total", "Envelopes delivered again because no ack came in time.",
                redeliveries.sum());
        counter(out, "parley_dead_letters_total", "Envelopes moved to the dead-letter queue.", deadLetters.sum());
        counter(out, "parley_incidents_total", "Requests whose reply deadline passed.", incidents.sum());
        counter(out, "parley_claims_reset_total", "Claims the sweep took back (claimant gone or silent).",
                claimsReset.sum());
        counter(out, "parley_claims_given_up_total", "Claims the sweep gave up after their last try (dead-lettered).",
                claimsGivenUp.sum());
        counter(out, "parley_sweep_kills_total", "Agent processes the sweep killed as stuck.", sweepKills.sum());
        counter(out, "parley_schedule_firings_total", "Occurrences of scheduled sends fired (an envelope each).",
                schedulesFired.sum());
        counter(out, "parley_schedule_skips_total", "Occurrences of scheduled sends refused when they came, and skipped.",
                schedulesSkipped.sum());
        renderTopicsAndTasks(out);
        renderChat(out);
        renderAdmission(out); // admission and rate limits
        renderPolicy(out); // policy rules, payload schemas, audit retention
        renderConnections(out); // connection timeouts and the per-address cap
        out.append("# HELP parley_commit_batch_size Jobs per group commit.\n# TYPE parley_commit_batch_size summary\n");
        out.append("parley_commit_batch_size_sum ").append(committedJobs.sum()).append('\n');
        out.append("parley_commit_batch_size_count ").append(commitLatency.count()).append('\n');
        commitLatency.render(out);
        foldLatency.render(out);
        pushLatency.render(out);
        gauge(out, "parley_open_streams", "SSE inbox streams open now.", openStreams.getAsInt());
        gauge(out, "parley_pushes_in_flight", "Webhook pushes under way: running, or waiting for a push permit.",
                pushesInFlight.getAsLong());
        counter(out, "parley_flow_dropped_total", "Envelopes the live message flow dropped for a follower that fell behind.",
                flowDropped.sum());
        gauge(out, "parley_inbox_backlog", "Envelopes committed but never delivered, over all inboxes.",
                backlog.getAsLong());
        renderFederation(out);
        renderExport(out);
        return out.toString();
    }

    // OTLP export: rendered only while it is on.
    private volatile java.util.Optional<LongSupplier[]> export = java.util.Optional.empty();

    /** The exporter's counts: spans the endpoint took, spans dropped on a full queue, failed batches. */
    public void exportFrom(LongSupplier exported, LongSupplier dropped, LongSupplier failures) {
        this.export = java.util.Optional.of(new LongSupplier[]{exported, dropped, failures});
    }

    private void renderExport(StringBuilder out) {
        export.ifPresent(counts -> {
            counter(out, "parley_trace_spans_exported_total", "Spans the OTLP endpoint accepted.",
                    counts[0].getAsLong());
            counter(out, "parley_trace_spans_dropped_total", "Spans and turns dropped because the export queue was"
                    + " full (export never holds up a send).", counts[1].getAsLong());
            counter(out, "parley_trace_export_failures_total", "Export batches the OTLP endpoint refused or did not"
                    + " answer.", counts[2].getAsLong());
        });
    }

    // Federation: only a gateway renders these.
    private volatile java.util.function.Supplier<java.util.Optional<dev.parley.core.FederationStatus>> federation =
            java.util.Optional::empty;

    public void federationFrom(java.util.function.Supplier<java.util.Optional<dev.parley.core.FederationStatus>> source) {
        this.federation = source;
    }

    private void renderFederation(StringBuilder out) {
        federation.get().ifPresent(f -> {
            gauge(out, "parley_federation_connected", "1 while NATS is in reach, 0 while envelopes for other"
                    + " gateways spool locally.", f.connected() ? 1 : 0);
            gauge(out, "parley_federation_spool_depth", "Records owed to other gateways, not yet acknowledged by"
                    + " this gateway's outbox stream.", f.spoolDepth());
            counter(out, "parley_federation_refused_total", "Inbound envelopes refused (sender not owned by its"
                    + " gateway, target not here, ACL), audited and never delivered.", f.refused());
            counter(out, "parley_federation_unreadable_total", "Inbound outbox records skipped as malformed or"
                    + " oversized.", f.unreadable());
            counter(out, "parley_federation_republished_total", "Envelopes published again because the gateway owning"
                    + " their target did not confirm them in time.", republished.sum());
            counter(out, "parley_federation_unconfirmed_total", "Envelopes dead-lettered because the gateway owning"
                    + " their target never confirmed them (an incident: that gateway is gone or cannot take them).",
                    unconfirmed.sum());
            counter(out, "parley_federation_unowned_total", "Envelopes dead-lettered because no gateway owned their"
                    + " target: its owner and all its fallbacks were gone (an incident).", unowned.sum());
            counter(out, "parley_federation_ownership_moves_total", "Nodes that changed owner gateway (a fallback took"
                    + " them over), as applied here.", f.ownershipMoves());
            counter(out, "parley_federation_state_skipped_total", "State room entries skipped as unreadable.",
                    f.stateSkipped());
            out.append("# HELP parley_federation_cursor Last stream sequence taken in from each source gateway.\n");
            out.append("# TYPE parley_federation_cursor gauge\n");
            f.cursors().forEach((source, seq) -> out.append("parley_federation_cursor{source=\"").append(source)
                    .append("\"} ").append(seq).append('\n'));
        });
    }

    private static void counter(StringBuilder out, String name, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" counter\n");
        out.append(name).append(' ').append(value).append('\n');
    }

    private static void gauge(StringBuilder out, String name, String help, long value) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" gauge\n");
        out.append(name).append(' ').append(value).append('\n');
    }

    // Topics, broadcasts and tasks: counted by their routes once committed.
    public final LongAdder topicEvents = new LongAdder();
    public final LongAdder broadcasts = new LongAdder();
    /** Pre-filled for every state and never changed after, so concurrent reads need no lock. */
    private final Map<TaskState, LongAdder> tasksReached = new EnumMap<>(TaskState.class);

    {
        for (TaskState state : TaskState.values()) {
            tasksReached.put(state, new LongAdder());
        }
    }

    /** A task was created ({@code submitted}) or moved to {@code state}. */
    public void taskReached(TaskState state) {
        tasksReached.get(state).increment();
    }

    // --- chat ---
    /** What chat messages did: per wired agent woken, kept as context or skipped; per message held or dropped. */
    private final Map<String, LongAdder> chat = new java.util.TreeMap<>(Map.of("woken", new LongAdder(), "context",
            new LongAdder(), "skipped", new LongAdder(), "refused", new LongAdder(), "held", new LongAdder(), "dropped",
            new LongAdder()));

    public void chatHandled(Chats.Handled handled) {
        chat.get("woken").add(handled.woken().size());
        chat.get("context").add(handled.context().size());
        chat.get("skipped").add(handled.skipped().size());
        chat.get("refused").add(handled.refused().size());
        handled.card().ifPresent(c -> chat.get("held").increment());
        handled.dropped().ifPresent(d -> chat.get("dropped").increment());
    }

    private void renderChat(StringBuilder out) {
        out.append("# HELP parley_chat_messages_total Chat messages handed in: per wired agent woken, context or")
                .append(" skipped; per message held for approval or dropped.\n");
        out.append("# TYPE parley_chat_messages_total counter\n");
        chat.forEach((outcome, count) -> out.append("parley_chat_messages_total{outcome=\"").append(outcome)
                .append("\"} ").append(count.sum()).append('\n'));
    }

    private void renderTopicsAndTasks(StringBuilder out) {
        counter(out, "parley_topic_events_total", "Topic events published (each fanned out in one commit).",
                topicEvents.sum());
        counter(out, "parley_broadcasts_total", "Broadcasts sent (each fanned out in one commit).", broadcasts.sum());
        out.append("# HELP parley_tasks_total Task state changes, by the state reached.\n");
        out.append("# TYPE parley_tasks_total counter\n");
        tasksReached.forEach((state, count) -> out.append("parley_tasks_total{state=\"").append(state.wire())
                .append("\"} ").append(count.sum()).append('\n'));
    }

    // --- admission by invite and rate limits ---
    /** Outcomes are error codes of the contract (or {@code issued}/{@code created}): a small, closed set of labels. */
    private final Map<String, LongAdder> exchanges = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, LongAdder> redeems = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, LongAdder> rateLimited = new java.util.concurrent.ConcurrentHashMap<>();

    /** An invite exchange ended with {@code outcome}: {@code issued} or the refusal's code. */
    public void exchange(String outcome) {
        exchanges.computeIfAbsent(outcome, o -> new LongAdder()).increment();
    }

    /** A ticket redeem ended with {@code outcome}: {@code created} or the refusal's code. */
    public void redeem(String outcome) {
        redeems.computeIfAbsent(outcome, o -> new LongAdder()).increment();
    }

    /** A request was refused for its rate; {@code scope} is {@code node} or {@code address}. */
    public void rateLimited(String scope) {
        rateLimited.computeIfAbsent(scope, o -> new LongAdder()).increment();
    }

    private void renderAdmission(StringBuilder out) {
        labelled(out, "parley_auth_exchanges_total", "Invite exchanges, by outcome (issued or the error code).",
                "outcome", exchanges);
        labelled(out, "parley_auth_redeems_total", "Ticket redeems, by outcome (created or the error code).",
                "outcome", redeems);
        labelled(out, "parley_rate_limited_total", "Requests refused with 429 rate_limited, by bucket (node or address).",
                "scope", rateLimited);
    }

    private static void labelled(StringBuilder out, String name, String help, String label, Map<String, LongAdder> values) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" counter\n");
        new java.util.TreeMap<>(values).forEach((value, count) -> out.append(name).append('{').append(label)
                .append("=\"").append(value).append("\"} ").append(count.sum()).append('\n'));
    }

    // --- policy rules, payload schemas and audit retention ---
    public final LongAdder policyReloads = new LongAdder();
    public final LongAdder policyReloadFailures = new LongAdder();
    public final LongAdder schemaViolations = new LongAdder();
    public final LongAdder auditPruned = new LongAdder();
    /** Decisions a policy rule took, keyed by effect and rule name (names come from the operator's file). */
    private final Map<String, Map<String, LongAdder>> ruleDecisions = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, LongAdder> ruleErrors = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile java.util.function.Supplier<String> policyVersion = () -> "";

    public void policyVersionFrom(java.util.function.Supplier<String> source) {
        this.policyVersion = source;
    }

    /** Counts a decision of the rules in force: a deny rule that matched, an allow rule that widened. */
    public void ruleMatched(dev.parley.core.PolicyRules.Effect effect, String rule) {
        ruleDecisions.computeIfAbsent(effect.wire(), e -> new java.util.concurrent.ConcurrentHashMap<>())
                .computeIfAbsent(rule, r -> new LongAdder()).increment();
    }

    /** Counts a rule that could not be evaluated for an input. */
    public void ruleFailed(String rule) {
        ruleErrors.computeIfAbsent(rule, r -> new LongAdder()).increment();
    }

    private void renderPolicy(StringBuilder out) {
        out.append("# HELP parley_policy_decisions_total Access decisions a policy rule took, by effect and rule.\n");
        out.append("# TYPE parley_policy_decisions_total counter\n");
        new java.util.TreeMap<>(ruleDecisions).forEach((effect, rules) -> new java.util.TreeMap<>(rules)
                .forEach((rule, count) -> out.append("parley_policy_decisions_total{effect=\"").append(effect)
                        .append("\",rule=\"").append(escape(rule)).append("\"} ").append(count.sum()).append('\n')));
        out.append("# HELP parley_policy_rule_errors_total Policy rule evaluations that failed, by rule.\n");
        out.append("# TYPE parley_policy_rule_errors_total counter\n");
        new java.util.TreeMap<>(ruleErrors).forEach((rule, count) -> out.append("parley_policy_rule_errors_total{rule=\"")
                .append(escape(rule)).append("\"} ").append(count.sum()).append('\n'));
        counter(out, "parley_policy_reloads_total", "Policy files loaded after start (the rules in force changed).",
                policyReloads.sum());
        counter(out, "parley_policy_reload_failures_total", "Policy files refused (missing, unreadable or not compiling).",
                policyReloadFailures.sum());
        out.append("# HELP parley_policy_info The policy version in force.\n# TYPE parley_policy_info gauge\n");
        out.append("parley_policy_info{version=\"").append(escape(policyVersion.get())).append("\"} 1\n");
        counter(out, "parley_schema_violations_total", "Envelopes refused because their data broke the schema of their kind.",
                schemaViolations.sum());
        counter(out, "parley_audit_pruned_total", "Audit entries deleted by the retention job.", auditPruned.sum());
    }

    private static String escape(String label) {
        return label.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    // --- connection timeouts and the per-address cap ---
    public final LongAdder connectionsRefused = new LongAdder();
    /** Pre-filled for every phase, so each label is there from the start and reads need no lock. */
    private final Map<ConnectionPhase, LongAdder> connectionTimeouts = new EnumMap<>(ConnectionPhase.class);
    private volatile IntSupplier openConnections = () -> 0;

    {
        for (ConnectionPhase phase : ConnectionPhase.values()) {
            connectionTimeouts.put(phase, new LongAdder());
        }
    }

    /** Where the count of open inbox streams comes from (the streams count themselves in and out once). */
    public void openStreamsFrom(IntSupplier source) {
        this.openStreams = source;
    }

    public void openConnectionsFrom(IntSupplier source) {
        this.openConnections = source;
    }

    public void connectionTimedOut(ConnectionPhase phase) {
        connectionTimeouts.get(phase).increment();
    }

    private void renderConnections(StringBuilder out) {
        out.append("# HELP parley_connection_timeouts_total Connections closed for waiting too long on the client, "
                + "by what was awaited (idle: a request line, header: the headers, body: the body).\n");
        out.append("# TYPE parley_connection_timeouts_total counter\n");
        connectionTimeouts.forEach((phase, count) -> out.append("parley_connection_timeouts_total{phase=\"")
                .append(phase.label()).append("\"} ").append(count.sum()).append('\n'));
        counter(out, "parley_connections_refused_total",
                "Connections refused with 429 too_many_connections: their address held the most allowed.",
                connectionsRefused.sum());
        gauge(out, "parley_open_connections", "HTTP connections open now.", openConnections.getAsInt());
    }
}
