package dev.parley.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.parley.bench.http.HttpConnection;
import dev.parley.bench.http.SseStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench crash}: does a SIGKILLed hub lose or repeat anything? The hub runs as a
 * child process ({@code parley serve}, same java and class path as this command) under a
 * closed-loop load of N senders; it is killed with SIGKILL K times at random moments (seeded)
 * and restarted on the same data directory and port. Every inbox is followed by a reader
 * that resumes its SSE stream after each restart with {@code Last-Event-ID} (its cursor).
 *
 * <p>A send whose connection dies under it has an unknown outcome; its sender resends the
 * same request ({@code messageId}) until it is answered, 202 (it had not been committed) or
 * 200 {@code "duplicate": true} with the first answer (it had). Both count as accepted.
 * lost = accepted but never seen by the reader of its inbox; duplicates = an envelope id seen
 * twice by a reader. Afterwards every inbox is also read back from the store, and the audit
 * log: each accepted send has exactly one allowed entry.
 */
@Command(name = "crash", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchCrashCommand",
        description = {"SIGKILL the hub K times under load and count lost and duplicated envelopes.",
                "",
                "Runs `parley serve` as a child process on a temporary directory, N closed-loop senders over M "
                        + "inboxes each followed by an SSE reader that resumes with Last-Event-ID, and SIGKILLs and "
                        + "restarts the hub K times at random (seeded) moments. Resends of requests whose outcome a "
                        + "kill left unknown use the same messageId. Prints accepted, lost (accepted, never seen by "
                        + "the reader) and duplicates (an envelope id seen twice), then reads every inbox and the audit "
                        + "log back from the hub; exits 1 unless both are 0, the store holds each accepted envelope "
                        + "once and nothing else, and every accepted send has exactly one audit entry."})
public final class BenchCrashCommand implements Callable<Integer> {
    private static final byte[] ID_FIELD = "\"id\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SEQ_FIELD = "\"seq\":".getBytes(StandardCharsets.US_ASCII);

    @Spec
    CommandSpec spec;

    @Mixin
    SenderOptions load = new SenderOptions(1024, 32, 200_000);

    @Mixin
    InboxOptions targets = new InboxOptions();

    @Mixin
    OutputOptions output = new OutputOptions();

    @Mixin
    QuickOption quick = new QuickOption();

    @ParentCommand
    BenchCommand bench;

    @Option(names = "--kills", defaultValue = "5", description = "SIGKILLs (each followed by a restart) (default: ${DEFAULT-VALUE}).")
    int kills;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of the kill moments (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--min-up", defaultValue = "1.5", paramLabel = "SECONDS",
            description = "Shortest time the hub runs under load before a kill (default: ${DEFAULT-VALUE}).")
    double minUp;

    @Option(names = "--max-up", defaultValue = "4", paramLabel = "SECONDS",
            description = "Longest time the hub runs under load before a kill (default: ${DEFAULT-VALUE}).")
    double maxUp;

    @Option(names = "--settle", defaultValue = "2", paramLabel = "SECONDS",
            description = "Load after the last restart before the senders stop (default: ${DEFAULT-VALUE}).")
    double settle;

    @Option(names = "--wal-every", defaultValue = "0", paramLabel = "SECONDS",
            description = "Sample the sizes of the hub's WAL and database this often, and right before each kill "
                    + "(default: 0, off).")
    double walEvery;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "1",
            description = "Each request carries N envelopes (1 to 1000) through POST /v1/messages:batch and is resent whole "
                    + "until answered; a batch resent after a kill must come back all duplicates (it had been "
                    + "committed) or none (it had not) (default: ${DEFAULT-VALUE}: single sends).")
    int batch;

    private volatile boolean stopSending;
    private volatile boolean stopReading;
    private String host;
    private int port;

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--senders", () -> load.senders = 16).unlessGiven("--inboxes", () -> targets.inboxes = 16)
                .unlessGiven("--min-up", () -> minUp = 0.8).unlessGiven("--max-up", () -> maxUp = 1.5)
                .unlessGiven("--settle", () -> settle = 1);
        validate();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        long t0 = System.nanoTime();
        Random random = new Random(seed);
        List<CrashSender> workers = new ArrayList<>();
        List<CursorReader> readers = new ArrayList<>();
        List<Thread> senderThreads = new ArrayList<>();
        List<Thread> readerThreads = new ArrayList<>();
        List<Double> upSeconds = new ArrayList<>();
        List<Double> restartSeconds = new ArrayList<>();
        List<WalSampler.Sample> walAtKills = new ArrayList<>();
        List<WalSampler.Sample> walSamples = List.of();
        try (BenchHub hub = BenchHub.child(bench.serve(spec), List.of(), Map.of(), List.of(), 0);
             ParleyWorkload nodes = new ParleyWorkload(load.senders, targets.inboxes, load.size, err);
             WalSampler wal = walEvery > 0 ? new WalSampler(hub.dir().resolve("data"), walEvery, err) : null) {
            host = hub.host();
            port = hub.port();
            BenchSupport.progress(err, "hub pid " + hub.pid() + " at " + hub.url() + ", data in " + hub.dir());
            nodes.createNodes(hub);
            for (int i = 0; i < targets.inboxes; i++) {
                CursorReader r = new CursorReader(i, nodes.inboxToken(i));
                readers.add(r);
                readerThreads.add(Thread.ofPlatform().daemon().name("crash-reader-" + i).start(r));
            }
            for (int i = 0; i < load.senders; i++) {
                CrashSender s = new CrashSender(i, nodes.senderToken(i), nodes.inboxIds);
                workers.add(s);
                senderThreads.add(Thread.ofPlatform().daemon().name("crash-sender-" + i).start(s));
            }
            BenchSupport.progress(err, "load: " + load.senders + " senders -> " + targets.inboxes + " inboxes; " + kills
                    + " SIGKILLs, " + minUp + "-" + maxUp + " s apart (seed " + seed + ")");
            for (int k = 1; k <= kills; k++) {
                double up = minUp + random.nextDouble() * (maxUp - minUp);
                upSeconds.add(up);
                Thread.sleep((long) (up * 1000));
                long before = accepted(workers);
                long pid = hub.pid();
                if (wal != null) {
                    walAtKills.add(wal.sample());
                }
                hub.kill();
                long r0 = System.nanoTime();
                hub.restart();
                double restart = (System.nanoTime() - r0) / 1e9;
                restartSeconds.add(restart);
                BenchSupport.progress(err, String.format(Locale.ROOT, "kill %d/%d after %.2f s up (pid %d, %,d accepted so far); "
                        + "restarted as pid %d in %.2f s", k, kills, up, pid, before, hub.pid(), restart));
            }
            Thread.sleep((long) (settle * 1000));
            stopSending = true;
            for (Thread t : senderThreads) {
                t.join(120_000);
            }
            Map<String, Integer> accepted = new HashMap<>();
            Result r = new Result();
            for (CrashSender s : workers) {
                for (int k = 0; k < s.ids.size(); k++) {
                    if (accepted.put(s.ids.get(k), s.inboxes.get(k)) != null) {
                        r.answeredTwice++; // two requests answered with the same envelope id
                    }
                }
                r.inDoubt += s.inDoubt;
                r.inDoubtCommitted += s.inDoubtCommitted;
                r.halfCommitted += s.halfCommitted;
                r.unresolved += s.unresolved;
                r.errors += s.errors;
                s.errorKinds.forEach((kind, n) -> r.errorKinds.merge(kind, n, Long::sum));
            }
            r.accepted = accepted.size();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (seen(readers) < r.accepted && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(200); // anything arriving late would be a duplicate: give it a moment to show
            stopReading = true;
            for (CursorReader reader : readers) {
                reader.close();
            }
            for (Thread t : readerThreads) {
                t.join(10_000);
            }
            for (CursorReader reader : readers) {
                synchronized (reader) {
                    r.duplicates += reader.duplicates;
                    r.seqGaps += reader.gaps;
                    r.seqRegressions += reader.regressions;
                    r.reconnects += reader.reconnects;
                    r.withoutCursor += reader.withoutCursor;
                }
            }
            for (Map.Entry<String, Integer> e : accepted.entrySet()) {
                CursorReader reader = readers.get(e.getValue());
                synchronized (reader) {
                    if (!reader.ids.contains(e.getKey())) {
                        r.lost++;
                    }
                }
            }
            storeCheck(hub, nodes, accepted, r);
            auditCheck(hub, accepted, r);
            r.seconds = (System.nanoTime() - t0) / 1e9;
            if (wal != null) {
                walSamples = wal.samples();
            }
            print(out, r, upSeconds, restartSeconds, walSamples, walAtKills);
            boolean storeWhole = r.storeMissing == 0 && r.storeIdsTwice == 0 && r.storeUnclaimed == 0;
            boolean auditWhole = r.auditMissing == 0 && r.auditTwice == 0 && r.auditIdsTwice == 0;
            return r.lost == 0 && r.duplicates == 0 && r.halfCommitted == 0 && storeWhole && auditWhole
                    && r.accepted > 0 ? 0 : 1;
        } finally {
            stopSending = true;
            stopReading = true;
            for (CursorReader reader : readers) {
                reader.close();
            }
        }
    }

    private static long accepted(List<CrashSender> workers) {
        long n = 0;
        for (CrashSender s : workers) {
            n += s.count;
        }
        return n;
    }

    private static long seen(List<CursorReader> readers) {
        long n = 0;
        for (CursorReader r : readers) {
            n += r.count;
        }
        return n;
    }

    /** What the run found. */
    private static final class Result {
        long accepted;
        long lost;
        long duplicates;
        long answeredTwice;
        long inDoubt;
        long inDoubtCommitted;
        long halfCommitted;
        long unresolved;
        long errors;
        final Map<String, Long> errorKinds = new TreeMap<>();
        long seqGaps;
        long seqRegressions;
        long reconnects;
        long withoutCursor;
        long storeEnvelopes;
        long storeMissing;
        long storeIdsTwice;
        long storeUnclaimed;
        long auditEntries;
        long auditMissing;
        long auditTwice;
        long auditIdsTwice;
        double seconds;
    }

    /** Reads every inbox back from the store (admin, by cursor) and checks it against the answers. */
    private void storeCheck(BenchHub hub, ParleyWorkload nodes, Map<String, Integer> accepted, Result r)
            throws IOException {
        Set<String> stored = new HashSet<>();
        for (int i = 0; i < targets.inboxes; i++) {
            long after = 0;
            while (true) {
                HttpConnection.Response res = hub.call("GET", "/v1/nodes/" + nodes.inboxIds[i] + "/inbox?after=" + after
                        + "&limit=1000", null);
                if (res.status() != 200) {
                    throw new IllegalStateException("GET inbox of " + nodes.inboxIds[i] + " answered " + res.status()
                            + ": " + res.body());
                }
                JsonNode page = BenchSupport.JSON.readTree(res.body());
                JsonNode items = page.path("items");
                if (items.isEmpty()) {
                    break;
                }
                for (JsonNode env : items) {
                    r.storeEnvelopes++;
                    String id = env.path("id").asText();
                    if (!stored.add(id)) {
                        r.storeIdsTwice++;
                    }
                    if (!accepted.containsKey(id)) {
                        r.storeUnclaimed++;
                    }
                }
                after = page.path("next").asLong();
            }
        }
        for (String id : accepted.keySet()) {
            if (!stored.contains(id)) {
                r.storeMissing++;
            }
        }
    }

    /**
     * Reads the audit log's allowed entries back (admin, JSON Lines) and checks that every
     * accepted send has exactly one, whether the hub was killed before or after its fold copied
     * it, and that no audit id was given twice.
     */
    private void auditCheck(BenchHub hub, Map<String, Integer> accepted, Result r) throws IOException {
        HttpConnection.Response res = hub.call("GET", "/v1/audit?decision=allow&action=send&format=jsonl", null);
        if (res.status() != 200) {
            throw new IllegalStateException("GET audit answered " + res.status() + ": " + res.body());
        }
        Set<String> audited = new HashSet<>();
        Set<Long> ids = new HashSet<>();
        for (String line : res.body().split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode entry = BenchSupport.JSON.readTree(line);
            if (!ids.add(entry.path("id").asLong())) {
                r.auditIdsTwice++;
            }
            String envelope = entry.path("envelopeId").asText();
            if (accepted.containsKey(envelope)) {
                r.auditEntries++;
                if (!audited.add(envelope)) {
                    r.auditTwice++;
                }
            }
        }
        r.auditMissing = accepted.keySet().stream().filter(id -> !audited.contains(id)).count();
    }

    /** The string value that follows {@code "id":"} first in the bytes, or null. */
    static String firstId(byte[] b, int len) {
        int n = ID_FIELD.length;
        outer:
        for (int i = 0; i + n <= len; i++) {
            for (int j = 0; j < n; j++) {
                if (b[i + j] != ID_FIELD[j]) {
                    continue outer;
                }
            }
            int start = i + n;
            int end = start;
            while (end < len && b[end] != '"') {
                end++;
            }
            return end < len ? new String(b, start, end - start, StandardCharsets.US_ASCII) : null;
        }
        return null;
    }

    // ---- senders ----

    /** A closed-loop sender that resends a request whose outcome is unknown until it is answered. */
    private final class CrashSender implements Runnable {
        private final int index;
        private final String token;
        private final String[] inboxIds;
        private final String pad;
        final List<String> ids = new ArrayList<>();
        final List<Integer> inboxes = new ArrayList<>();
        volatile long count;
        long inDoubt;
        long inDoubtCommitted;
        long halfCommitted;
        long unresolved;
        long errors;
        final Map<String, Long> errorKinds = new TreeMap<>();

        CrashSender(int index, String token, String[] inboxIds) {
            this.index = index;
            this.token = token;
            this.inboxIds = inboxIds;
            this.pad = BenchSupport.text(Math.max(0, load.size - 24));
        }

        @Override
        public void run() {
            HttpConnection conn = new HttpConnection(host, port, 15_000);
            try {
                long k = 0;
                while (!stopSending) {
                    int[] to = new int[batch];
                    ArrayNode messages = BenchSupport.JSON.createArrayNode();
                    for (int j = 0; j < batch; j++) {
                        to[j] = (int) ((index + k) % inboxIds.length);
                        String marker = "crash-s" + index + "-" + k++;
                        messages.addObject().put("to", inboxIds[to[j]]).put("text", marker + " " + pad)
                                .put("messageId", marker);
                    }
                    JsonNode body = batch == 1 ? messages.get(0) : BenchSupport.JSON.createObjectNode().set("messages", messages);
                    byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
                    byte[] head = HttpConnection.head("POST", batch == 1 ? "/v1/messages" : "/v1/messages:batch",
                            conn.hostHeader(), token, "application/json", bytes.length);
                    sendUntilAnswered(conn, head, bytes, to);
                }
            } finally {
                conn.close();
            }
        }

        /** One envelope of an answer: its id, and whether it was the first answer to its messageId again. */
        private record Answered(String id, boolean duplicate) {
        }

        private void sendUntilAnswered(HttpConnection conn, byte[] head, byte[] body, int[] to) {
            boolean doubt = false;
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < giveUp) {
                int status;
                try {
                    status = conn.exchange(head, body);
                } catch (ConnectException e) {
                    pause(); // never reached the hub: it is restarting
                    continue;
                } catch (IOException e) {
                    doubt = true; // may have been committed before the connection died
                    pause();
                    continue;
                }
                if (status == 202 || status == 200) {
                    List<Answered> answered = batch == 1 ? single(conn, status) : results(conn);
                    if (answered.size() != to.length) {
                        error("answer " + status + " without an id and seq for every envelope");
                        return;
                    }
                    long duplicates = answered.stream().filter(Answered::duplicate).count();
                    if (doubt) {
                        inDoubt += to.length;
                        inDoubtCommitted += duplicates;
                        if (duplicates != 0 && duplicates != to.length) {
                            halfCommitted++; // one transaction per request: all of it or none
                        }
                    } else if (duplicates > 0) {
                        error("200 duplicate for a request sent once");
                    }
                    for (int j = 0; j < to.length; j++) {
                        ids.add(answered.get(j).id());
                        inboxes.add(to[j]);
                    }
                    count = ids.size();
                    return;
                }
                if (status == 429 || status >= 500) {
                    pause();
                    continue;
                }
                error("HTTP " + status);
                return;
            }
            unresolved++;
        }

        /** A single send's answer: 202, or 200 for a duplicate; empty without an id and seq. */
        private static List<Answered> single(HttpConnection conn, int status) {
            String id = firstId(conn.body(), conn.bodyLength());
            return id == null || conn.bodyLongField(SEQ_FIELD) < 0 ? List.of() : List.of(new Answered(id, status == 200));
        }

        /** A batch's answer: each result with an id and seq; an item without them ends the list there. */
        private static List<Answered> results(HttpConnection conn) {
            List<Answered> out = new ArrayList<>();
            try {
                for (JsonNode result : BenchSupport.JSON.readTree(conn.bodyText()).path("results")) {
                    if (!result.path("id").isTextual() || !result.path("seq").isNumber()) {
                        break;
                    }
                    out.add(new Answered(result.path("id").asText(), result.path("duplicate").asBoolean(false)));
                }
            } catch (IOException e) {
                return List.of();
            }
            return out;
        }

        private void error(String kind) {
            errors++;
            errorKinds.merge(kind, 1L, Long::sum);
        }

        private void pause() {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---- readers ----

    /** Follows one inbox by cursor: an SSE stream resumed with Last-Event-ID after every break. */
    private final class CursorReader implements SseStream.Listener, Runnable {
        private final int inbox;
        private final String token;
        final Set<String> ids = new HashSet<>();
        volatile long count;
        long lastSeq;
        long duplicates;
        long gaps;
        long regressions;
        long reconnects;
        long withoutCursor;
        private volatile SseStream current;

        CursorReader(int inbox, String token) {
            this.inbox = inbox;
            this.token = token;
        }

        @Override
        public void run() {
            boolean first = true;
            while (!stopReading) {
                long cursor;
                synchronized (this) {
                    cursor = lastSeq;
                }
                HttpConnection conn = new HttpConnection(host, port, 10_000);
                try {
                    SseStream s = conn.openStream("/v1/inbox/stream", token, "Last-Event-ID: " + cursor + "\r\n", this,
                            true);
                    current = s;
                    if (stopReading) {
                        s.close();
                        return;
                    }
                    if (!first) {
                        synchronized (this) {
                            reconnects++; // resumed from the cursor after a break
                        }
                    }
                    first = false;
                    s.run();
                } catch (IOException | RuntimeException e) {
                    // the hub is down or restarting: try again
                }
                conn.close(); // when the stream opened, the socket is the stream's (closed at its end)
                if (!stopReading) {
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }

        @Override
        public void onEvent(long seq, String event, byte[] data, int dataLength) {
            String id = firstId(data, dataLength);
            synchronized (this) {
                if (seq < 0) {
                    withoutCursor++; // a redelivery (written without id:); none are configured here
                }
                if (id != null && !ids.add(id)) {
                    duplicates++;
                }
                if (seq >= 0) {
                    if (seq != lastSeq + 1) {
                        if (seq <= lastSeq) {
                            regressions++;
                        } else {
                            gaps++;
                        }
                    }
                    lastSeq = Math.max(lastSeq, seq);
                }
                count = ids.size();
            }
        }

        void close() {
            SseStream s = current;
            if (s != null) {
                s.close();
            }
        }
    }

    // ---- options and output ----

    private void validate() {
        if (kills < 0 || kills > 1000) {
            throw new ParameterException(spec.commandLine(), "--kills must be 0..1000");
        }
        load.validate();
        targets.validate();
        if (!(minUp > 0) || maxUp < minUp) {
            throw new ParameterException(spec.commandLine(), "need 0 < --min-up <= --max-up");
        }
        if (settle < 0) {
            throw new ParameterException(spec.commandLine(), "--settle must not be negative");
        }
        if (batch < 1 || batch > 1000) {
            throw new ParameterException(spec.commandLine(), "--batch must be between 1 and 1000 (the hub's batch limit)");
        }
        if (walEvery < 0) {
            throw new ParameterException(spec.commandLine(), "--wal-every must not be negative");
        }
    }

    private void print(PrintWriter out, Result r, List<Double> up, List<Double> restart,
                       List<WalSampler.Sample> walSamples, List<WalSampler.Sample> walAtKills) {
        Report report = new Report(String.format(Locale.ROOT,
                "parley bench crash: %d senders -> %d inboxes, %d-byte text, %d SIGKILLs (seed %d), %.1f s in all",
                load.senders, targets.inboxes, load.size, kills, seed, r.seconds));
        report.row("kills (SIGKILL, then restart)", "%d; up %s s before each; restart to healthy %s s", kills,
                range(up), range(restart));
        report.row("accepted (202, or 200 on a resend)", "%,d", r.accepted);
        report.row("in doubt at a kill, resent", "%,d (had been committed: %,d; had not: %,d)", r.inDoubt,
                r.inDoubtCommitted, r.inDoubt - r.inDoubtCommitted);
        if (batch > 1) {
            report.row("batches half committed (resent, some duplicates)", "%,d of batches of %d", r.halfCommitted,
                    batch);
        }
        report.row("lost (accepted, never read)", "%,d", r.lost);
        report.row("duplicates (an id read twice)", "%,d", r.duplicates);
        report.row("seq gaps / regressions at readers", "%,d / %,d", r.seqGaps, r.seqRegressions);
        report.row("reader reconnects (Last-Event-ID)", "%,d", r.reconnects);
        report.row("store read-back", "%,d envelopes; accepted missing %,d; ids twice %,d; not answered to anyone %,d",
                r.storeEnvelopes, r.storeMissing, r.storeIdsTwice, r.storeUnclaimed);
        report.row("audit read-back (allowed sends)", "%,d entries of accepted sends; missing %,d; one send twice %,d;"
                + " audit ids twice %,d", r.auditEntries, r.auditMissing, r.auditTwice, r.auditIdsTwice);
        report.row("errors", "%,d%s; unresolved sends %,d; two answers with one id %,d", r.errors,
                r.errorKinds.isEmpty() ? "" : " " + r.errorKinds, r.unresolved, r.answeredTwice);
        if (!walSamples.isEmpty()) {
            report.row("WAL (sampled every " + walEvery + " s)", "largest %s; at the kills %s; database largest %s",
                    WalSampler.megabytes(walSamples.stream().mapToLong(WalSampler.Sample::walBytes).max().orElse(0)),
                    walAtKills.stream().map(s -> WalSampler.megabytes(s.walBytes())).toList(),
                    WalSampler.megabytes(walSamples.stream().mapToLong(WalSampler.Sample::dbBytes).max().orElse(0)));
            report.put("walSamples", walSamples);
            report.put("walAtKills", walAtKills);
        }
        report.put("accepted", r.accepted);
        report.put("lost", r.lost);
        report.put("duplicates", r.duplicates);
        report.put("kills", kills);
        report.put("seed", seed);
        report.put("senders", load.senders);
        report.put("inboxes", targets.inboxes);
        report.put("inDoubt", r.inDoubt);
        report.put("inDoubtCommitted", r.inDoubtCommitted);
        report.put("batch", batch);
        report.put("halfCommitted", r.halfCommitted);
        report.put("seqGaps", r.seqGaps);
        report.put("seqRegressions", r.seqRegressions);
        report.put("readerReconnects", r.reconnects);
        report.put("storeEnvelopes", r.storeEnvelopes);
        report.put("storeMissing", r.storeMissing);
        report.put("storeIdsTwice", r.storeIdsTwice);
        report.put("storeUnclaimed", r.storeUnclaimed);
        report.put("auditEntries", r.auditEntries);
        report.put("auditMissing", r.auditMissing);
        report.put("auditTwice", r.auditTwice);
        report.put("auditIdsTwice", r.auditIdsTwice);
        report.put("errors", r.errors);
        report.put("unresolved", r.unresolved);
        report.put("seconds", r.seconds);
        report.put("upSeconds", up.stream().map(BenchSupport::round).toList());
        report.put("restartSeconds", restart.stream().map(BenchSupport::round).toList());
        report.print(out, output.json);
    }

    private static String range(List<Double> values) {
        if (values.isEmpty()) {
            return "-";
        }
        double lo = values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        double hi = values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
        return String.format(Locale.ROOT, "%.2f-%.2f", lo, hi);
    }
}
