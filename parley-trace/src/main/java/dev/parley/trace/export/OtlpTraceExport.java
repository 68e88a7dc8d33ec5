package dev.parley.trace.export;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporterBuilder;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.MemoryMode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.data.SpanData;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Exports hub spans and agent turns over OTLP/HTTP with the OpenTelemetry SDK's exporter, off the
 * send path: {@link #offer} puts a record on a bounded queue and returns at once; one thread
 * turns batches of records into spans and posts them. When the queue is full a record is dropped
 * and counted; a failed export is counted and logged at most once a minute. Nothing here throws
 * into the hub.
 */
public final class OtlpTraceExport implements AutoCloseable {
    /** Records waiting to be exported; past this, offers are dropped. */
    public static final int QUEUE_CAPACITY = 4096;
    /** Most records taken in one batch, and most spans posted in one request. */
    public static final int MAX_BATCH = 512;
    /** Longest a record waits for its batch to fill. */
    public static final Duration BATCH_DELAY = Duration.ofSeconds(1);
    /** How long {@link #close()} gives the queue to drain. */
    public static final Duration CLOSE_DEADLINE = Duration.ofSeconds(5);
    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final Logger LOG = Logger.getLogger(OtlpTraceExport.class.getName());
    /**
     * The SDK's exporter logs every failed request itself (a few a minute); failures are counted
     * and logged here instead. Held so the level set on it is not collected with it.
     */
    private static final Logger SDK_EXPORT_LOG = Logger.getLogger("io.opentelemetry.exporter.otlp.internal.HttpExporter");

    private final ArrayBlockingQueue<Exportable> queue = new ArrayBlockingQueue<>(QUEUE_CAPACITY);
    private final OtlpHttpSpanExporter exporter;
    private final OtlpSpans spans;
    private final URI endpoint;
    private final long waitNanos;
    private final Thread worker;
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong exported = new AtomicLong();
    private volatile boolean closing;
    // The worker's own: when it last logged, and the counts it last logged.
    private long loggedAt;
    private long loggedFailures;
    private long loggedDrops;

    private OtlpTraceExport(OtlpHttpSpanExporter exporter, OtlpSpans spans, URI endpoint, Duration timeout) {
        this.exporter = exporter;
        this.spans = spans;
        this.endpoint = endpoint;
        // The SDK bounds each export by its timeout (retries included); a little more covers the hand-off.
        this.waitNanos = timeout.isZero() ? Long.MAX_VALUE / 4 : timeout.plusSeconds(1).toNanos();
        this.worker = Thread.ofPlatform().name("parley-otlp-export").daemon().unstarted(this::run);
    }

    /**
     * Starts exporting with {@code settings}, which must be {@link OtlpSettings#enabled() enabled}.
     * The exporter is built here, so a bad endpoint fails now rather than at the first export.
     */
    public static OtlpTraceExport start(OtlpSettings settings) {
        URI endpoint = settings.tracesEndpoint().filter(e -> settings.enabled()).orElseThrow(() ->
                new OtlpSettingsException("trace export is off: set OTEL_EXPORTER_OTLP_ENDPOINT (or "
                        + "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and leave OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none unset"));
        SDK_EXPORT_LOG.setLevel(Level.OFF);
        OtlpHttpSpanExporterBuilder builder = OtlpHttpSpanExporter.builder()
                .setEndpoint(endpoint.toString())
                .setTimeout(settings.timeout())
                .setCompression(settings.compression())
                .setMeterProvider(MeterProvider::noop)
                // Fresh buffers per export: an export the SDK failed to end in time must not share them with the next.
                .setMemoryMode(MemoryMode.IMMUTABLE_DATA);
        settings.headers().forEach(builder::addHeader);
        AttributesBuilder resource = Attributes.builder();
        settings.resourceAttributes().forEach((key, value) -> resource.put(AttributeKey.stringKey(key), value));
        resource.put(AttributeKey.stringKey("service.name"), settings.serviceName());
        OtlpTraceExport export = new OtlpTraceExport(builder.build(),
                new OtlpSpans(Resource.getDefault().merge(Resource.create(resource.build()))), endpoint,
                settings.timeout());
        export.worker.start();
        return export;
    }

    /**
     * Queues {@code item} for export. Never blocks and never throws: when the queue is full, or the
     * export is closing, the item is dropped and counted in {@link #dropped()}.
     */
    public boolean offer(Exportable item) {
        if (item != null && !closing && queue.offer(item)) {
            return true;
        }
        dropped.incrementAndGet();
        return false;
    }

    /** Records dropped because the queue was full, null, or offered after close. */
    public long dropped() {
        return dropped.get();
    }

    /** Export requests that failed (the receiver refused, could not be reached, or timed out). */
    public long failures() {
        return failures.get();
    }

    /** Spans the receiver accepted. */
    public long exported() {
        return exported.get();
    }

    /** Drains the queue within {@link #CLOSE_DEADLINE}, then stops; see {@link #close(Duration)}. */
    @Override
    public void close() {
        close(CLOSE_DEADLINE);
    }

    /**
     * Exports what is queued, waiting at most {@code deadline}, then shuts the exporter down (which
     * ends an export still in flight). Records still queued then are counted as dropped.
     *
     * @return whether everything queued was handed to the receiver in time
     */
    public boolean close(Duration deadline) {
        closing = true;
        worker.interrupt(); // wakes it from waiting for a batch to fill
        boolean drained = join(deadline);
        exporter.shutdown();
        if (!drained) {
            join(BATCH_DELAY); // after shutdown its exports fail at once
        }
        List<Exportable> left = new ArrayList<>();
        queue.drainTo(left);
        dropped.addAndGet(left.size());
        return drained;
    }

    private boolean join(Duration limit) {
        try {
            return worker.join(limit);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !worker.isAlive();
        }
    }

    private void run() {
        List<Exportable> batch = new ArrayList<>(MAX_BATCH);
        while (true) {
            Exportable first = next(BATCH_DELAY.toNanos());
            if (first == null) {
                if (closing && queue.isEmpty()) {
                    return;
                }
                continue;
            }
            batch.add(first);
            long deadline = System.nanoTime() + BATCH_DELAY.toNanos();
            while (batch.size() < MAX_BATCH) {
                queue.drainTo(batch, MAX_BATCH - batch.size());
                long left = deadline - System.nanoTime();
                if (batch.size() >= MAX_BATCH || left <= 0) {
                    break;
                }
                Exportable more = next(left);
                if (more == null) {
                    break;
                }
                batch.add(more);
            }
            export(batch);
            batch.clear();
        }
    }

    /** The next record, waiting up to {@code nanos} unless closing; null when there is none. */
    private Exportable next(long nanos) {
        try {
            return closing ? queue.poll() : queue.poll(nanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            return queue.poll(); // close() woke us; the loop sees closing
        }
    }

    private void export(List<Exportable> batch) {
        List<SpanData> data = new ArrayList<>();
        String reason = null;
        for (Exportable item : batch) {
            try {
                data.addAll(spans.of(item));
            } catch (RuntimeException e) { // a record the mapping cannot take must not stop the thread
                failures.incrementAndGet();
                reason = "a record could not be made into spans: " + e.getMessage();
            }
        }
        for (int from = 0; from < data.size(); from += MAX_BATCH) {
            List<SpanData> chunk = data.subList(from, Math.min(data.size(), from + MAX_BATCH));
            try {
                CompletableResultCode result = exporter.export(chunk);
                await(result);
                if (result.isSuccess()) {
                    exported.addAndGet(chunk.size());
                } else {
                    failures.incrementAndGet();
                    Throwable cause = result.getFailureThrowable();
                    reason = cause == null ? "the receiver refused the spans or did not answer in time" : reason(cause);
                }
            } catch (RuntimeException e) {
                failures.incrementAndGet();
                reason = reason(e);
            }
        }
        report(reason);
    }

    /** The first message down the causes (the JDK's ConnectException has none of its own). */
    private static String reason(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                return t.getMessage();
            }
        }
        return failure.getClass().getSimpleName();
    }

    private void await(CompletableResultCode result) {
        long deadline = System.nanoTime() + waitNanos;
        while (!result.isDone()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            result.join(left, TimeUnit.NANOSECONDS);
            Thread.interrupted(); // close() wakes this thread with an interrupt; the export in flight keeps its time
        }
    }

    /** Logs failures and drops since the last report, at most once a minute. */
    private void report(String reason) {
        long failed = failures.get();
        long lost = dropped.get();
        long now = System.nanoTime();
        if (failed == loggedFailures && lost == loggedDrops || loggedAt != 0 && now - loggedAt < LOG_EVERY_NANOS) {
            return;
        }
        LOG.warning("OTLP trace export to " + endpoint + ": " + (failed - loggedFailures) + " failed request(s)"
                + (reason == null ? "" : " (last: " + reason + ")") + " and " + (lost - loggedDrops)
                + " record(s) dropped (queue full, or closing) since the last report; logged at most once a minute");
        loggedAt = now == 0 ? 1 : now;
        loggedFailures = failed;
        loggedDrops = lost;
    }
}
