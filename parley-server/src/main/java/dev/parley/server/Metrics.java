package dev.parley.server;

import dev.parley.core.TaskState;
import dev.parley.store.CommitObserver;

import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/** The hub's counters and gauges, rendered in the Prometheus text format. */
final class Metrics implements CommitObserver {
    final LongAdder sendsAccepted = new LongAdder();
    final LongAdder sendsDuplicate = new LongAdder();
    final LongAdder sendsDenied = new LongAdder();
    final LongAdder slowReadersDisconnected = new LongAdder();
    final AtomicInteger openStreams = new AtomicInteger();

    // Delivery after acceptance: pushes, retries, redeliveries, dead letters, missed deadlines.
    final LongAdder pushes = new LongAdder();
    final LongAdder retries = new LongAdder();
    final LongAdder redeliveries = new LongAdder();
    final LongAdder deadLetters = new LongAdder();
    final LongAdder incidents = new LongAdder();

    private final LongAdder committedJobs = new LongAdder();
    private final Histogram commitLatency = new Histogram("parley_commit_latency_seconds",
            "Time to run and sync one group commit.");
    private final Histogram pushLatency = new Histogram("parley_push_latency_seconds",
            "Time from the start of a webhook POST to its answer.");
    private volatile LongSupplier backlog = () -> 0;

    void backlogFrom(LongSupplier source) {
        this.backlog = source;
    }

    @Override
    public void committed(int jobs, long nanos) {
        committedJobs.add(jobs);
        commitLatency.observe(nanos);
    }

    void pushLatency(Instant started, Instant answered) {
        pushLatency.observe(Duration.between(started, answered).toNanos());
    }

    String render() {
        StringBuilder out = new StringBuilder(4096);
        counter(out, "parley_sends_accepted_total", "Envelopes accepted (committed) from sends and replies.",
                sendsAccepted.sum());
        counter(out, "parley_sends_duplicate_total", "Sends answered from an earlier messageId without a new envelope.",
                sendsDuplicate.sum());
        counter(out, "parley_sends_denied_total", "Sends refused by the ACL or for an unknown target.",
                sendsDenied.sum());
        counter(out, "parley_slow_readers_disconnected_total", "Streams cut because a write stayed blocked too long.",
                slowReadersDisconnected.sum());
        counter(out, "parley_pushes_total", "Webhook pushes answered 2xx.", pushes.sum());
        counter(out, "parley_push_retries_total", "Webhook pushes that failed and were rescheduled.", retries.sum());
        counter(out, "parley_redeliveries_total", "Envelopes delivered again because no ack came in time.",
                redeliveries.sum());
        counter(out, "parley_dead_letters_total", "Envelopes moved to the dead-letter queue.", deadLetters.sum());
        counter(out, "parley_incidents_total", "Requests whose reply deadline passed.", incidents.sum());
        renderTopicsAndTasks(out);
        out.append("# HELP parley_commit_batch_size Jobs per group commit.\n# TYPE parley_commit_batch_size summary\n");
        out.append("parley_commit_batch_size_sum ").append(committedJobs.sum()).append('\n');
        out.append("parley_commit_batch_size_count ").append(commitLatency.count()).append('\n');
        commitLatency.render(out);
        pushLatency.render(out);
        gauge(out, "parley_open_streams", "SSE inbox streams open now.", openStreams.get());
        gauge(out, "parley_inbox_backlog", "Envelopes committed but never delivered, over all inboxes.",
                backlog.getAsLong());
        return out.toString();
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
    final LongAdder topicEvents = new LongAdder();
    final LongAdder broadcasts = new LongAdder();
    /** Pre-filled for every state and never changed after, so concurrent reads need no lock. */
    private final Map<TaskState, LongAdder> tasksReached = new EnumMap<>(TaskState.class);

    {
        for (TaskState state : TaskState.values()) {
            tasksReached.put(state, new LongAdder());
        }
    }

    /** A task was created ({@code submitted}) or moved to {@code state}. */
    void taskReached(TaskState state) {
        tasksReached.get(state).increment();
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
}
