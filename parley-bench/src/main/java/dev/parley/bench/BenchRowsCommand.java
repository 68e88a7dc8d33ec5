package dev.parley.bench;

import dev.parley.core.AuditEntry;
import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.core.UuidV7;
import dev.parley.store.InboxOrder;
import dev.parley.store.SqliteStore;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code parley bench rows}: what reading envelopes back from the store costs, per envelope and
 * per column. A replay, a poll and a stream catching up all read pages of an inbox by seq; this
 * times that read alone (no HTTP, no encoding), then the same page query over the same file
 * with one column and with every column of the table, on a connection opened as the store's
 * readers are, so the share that each column read takes is measured, not guessed. No hub: the
 * store is opened in this JVM on a temporary directory.
 */
@Command(name = "rows", mixinStandardHelpOptions = true, resourceBundle = "dev.parley.bench.BenchRowsCommand",
        description = {"Time the store's read of an inbox's pages per envelope, and the same query with one column "
                + "and with every column, per row.",
                "",
                "Opens a store on a temporary directory (removed afterwards), appends --envelopes envelopes "
                        + "(--text characters each) to one inbox from 32 threads, each with its allowed send's audit "
                        + "entry, and tells the writer thread's CPU an append, reads the inbox back in pages of "
                        + "256 --rounds times (EventStore.inboxAfter), then closes the store and runs that page's "
                        + "query over the file (a connection opened as the store's readers are), selecting seq alone and then every column of the "
                        + "envelopes table (each read as bytes), alternating, --rounds times each. Exits 1 when a "
                        + "read did not return every envelope in seq order."})
public final class BenchRowsCommand implements Callable<Integer> {
    private static final NodeId FROM = NodeId.of("bench-rows-from");
    private static final NodeId TO = NodeId.of("bench-rows-to");
    private static final int PAGE = 256;
    private static final int APPENDERS = 32;

    @Spec
    CommandSpec spec;

    @Mixin
    OutputOptions output = new OutputOptions();

    @Mixin
    QuickOption quick = new QuickOption();

    @Option(names = "--envelopes", defaultValue = "50000", description = "Envelopes in the inbox (default: ${DEFAULT-VALUE}).")
    int envelopes;

    @Option(names = "--text", defaultValue = "256", description = "Characters of text per envelope (default: ${DEFAULT-VALUE}).")
    int textChars;

    @Option(names = "--rounds", defaultValue = "10", description = "Reads of the whole inbox per way of reading (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Override
    public Integer call() throws Exception {
        quick.unlessGiven("--envelopes", () -> envelopes = 2000).unlessGiven("--rounds", () -> rounds = 2);
        if (envelopes < 1 || envelopes > 10_000_000 || textChars < 0 || textChars > 1_000_000 || rounds < 1) {
            throw new ParameterException(spec.commandLine(),
                    "--envelopes must be 1..10000000, --text 0..1000000, --rounds positive");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Path dir = Files.createTempDirectory("parley-bench-rows-");
        try {
            double fillSeconds;
            double writerMicros;
            long[] store = new long[rounds];
            boolean complete = true;
            try (SqliteStore s = SqliteStore.open(dir, e -> { }, (count, nanos) -> { })) {
                long f0 = System.nanoTime();
                long cpu0 = BenchSupport.processCpuNanos();
                Machine.ThreadTicks ticks0 = Machine.ThreadTicks.now();
                fill(s);
                fillSeconds = (System.nanoTime() - f0) / 1e9;
                long cpu1 = BenchSupport.processCpuNanos();
                writerMicros = cpu0 < 0 || cpu1 < 0 ? Double.NaN : ticks0.microsEachUntil(Machine.ThreadTicks.now(),
                        cpu1 - cpu0, envelopes).getOrDefault(Machine.ThreadPart.WRITER, Double.NaN);
                BenchSupport.progress(err, String.format(Locale.ROOT, "appended %,d envelopes in %.1f s", envelopes,
                        fillSeconds));
                for (int r = 0; r < rounds; r++) {
                    long t0 = System.nanoTime();
                    complete &= readAll(s);
                    store[r] = System.nanoTime() - t0;
                }
            }
            String[] columns;
            long[] one = new long[rounds];
            long[] all = new long[rounds];
            try (Connection c = SqliteStore.openReader(dir)) {
                columns = columns(c);
                for (int r = 0; r < rounds; r++) {
                    one[r] = query(c, new String[] {"seq"});
                    all[r] = query(c, columns);
                }
            }
            Arrays.sort(store);
            Arrays.sort(one);
            Arrays.sort(all);
            double storeBest = store[0] / (double) envelopes;
            double storeMedian = store[rounds / 2] / (double) envelopes;
            double oneBest = one[0] / (double) envelopes;
            double allBest = all[0] / (double) envelopes;
            double perColumn = (allBest - oneBest) / (columns.length - 1);

            Report report = new Report(String.format(Locale.ROOT, "parley bench rows: one inbox of %,d envelopes "
                    + "(%d-character text), read back in pages of %d, store in this process", envelopes, textChars, PAGE));
            report.row("append (" + APPENDERS + " threads)", "%,d envelopes in %.1f s, the writer's CPU %.1f us an append",
                    envelopes, fillSeconds, writerMicros);
            report.row("store page read (inboxAfter) best / median", "%,.0f / %,.0f ns per envelope (%d rounds)",
                    storeBest, storeMedian, rounds);
            report.row("same query, seq alone, best", "%,.0f ns per row", oneBest);
            report.row("same query, all " + columns.length + " columns, best", "%,.0f ns per row", allBest);
            report.row("a column read", "%,.0f ns ((all - seq alone) / %d)", perColumn, columns.length - 1);
            report.row("every read complete and in order", "%s", complete);
            report.put("envelopes", envelopes).put("textChars", textChars).put("rounds", rounds)
                    .put("columns", columns.length).put("complete", complete).put("appendSeconds", fillSeconds)
                    .put("writerMicrosPerAppend", writerMicros)
                    .put("storeReadNsPerEnvelope", storeBest).put("storeReadMedianNsPerEnvelope", storeMedian)
                    .put("seqAloneNsPerRow", oneBest).put("allColumnsNsPerRow", allBest).put("columnNs", perColumn);
            report.print(out, output.json);
            return complete ? 0 : 1;
        } finally {
            BenchSupport.deleteTree(dir);
        }
    }

    /** Appends the envelopes from {@link #APPENDERS} threads, so that commits group them as the hub's do. */
    private void fill(SqliteStore store) throws Exception {
        UuidV7 ids = new UuidV7(InstantSource.system());
        String text = BenchSupport.text(textChars);
        ExecutorService appenders = Executors.newFixedThreadPool(APPENDERS);
        try {
            List<Future<?>> appended = new ArrayList<>(envelopes);
            for (int i = 0; i < envelopes; i++) {
                Envelope draft = new Envelope(ids.next(), 0, FROM, TO, "message",
                        textChars == 0 ? Optional.empty() : Optional.of(text), Optional.empty(), Optional.empty(),
                        Optional.empty(), Optional.empty(), Optional.empty(), Map.of(), Instant.now(),
                        new Trace(1, Route.INTRA_GROUP, "bench"));
                // the entry a node's allowed send is audited with
                AuditEntry audit = new AuditEntry(draft.createdAt(), FROM.value(), "send", TO.value(),
                        AuditEntry.Decision.ALLOW, "bench", Optional.of(draft.id()), "bench");
                appended.add(appenders.submit(() -> store.append(draft, audit, Optional.empty(), Optional.empty())));
            }
            for (Future<?> f : appended) {
                f.get();
            }
        } finally {
            appenders.shutdown();
        }
    }

    /** Reads the inbox page by page; true when it held seqs 1 to {@link #envelopes}, in order. */
    private boolean readAll(SqliteStore store) {
        long expected = 1;
        for (long after = 0; ; ) {
            List<Envelope> page = store.inboxAfter(TO, after, PAGE);
            if (page.isEmpty()) {
                return expected == envelopes + 1L;
            }
            for (Envelope e : page) {
                if (e.seq() != expected++) {
                    return false;
                }
            }
            after = page.getLast().seq();
        }
    }

    /** The envelopes table's columns, as SQLite lists them. */
    private static String[] columns(Connection c) throws SQLException {
        List<String> names = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("PRAGMA table_info(envelopes)")) {
            while (rs.next()) {
                names.add(rs.getString("name"));
            }
        }
        return names.toArray(String[]::new);
    }

    /** Nanoseconds to page through the inbox with the store's page query, selecting {@code columns}. */
    private long query(Connection c, String[] columns) throws SQLException {
        long t0 = System.nanoTime();
        long rows = 0;
        // the store's page of folded envelopes: every one here is folded, its store closed
        try (PreparedStatement page = c.prepareStatement(InboxOrder.foldedAfter("e.seq" + (columns.length > 1 ? ", " : "")
                + String.join(", ", Arrays.stream(columns).filter(n -> !n.equals("seq")).map(n -> "e." + n).toList())))) {
            page.setString(1, TO.value());
            page.setInt(3, PAGE);
            for (long after = 0; ; ) {
                page.setLong(2, after);
                long read = 0;
                try (ResultSet rs = page.executeQuery()) {
                    while (rs.next()) {
                        after = rs.getLong(1);
                        for (int i = 2; i <= columns.length; i++) {
                            rs.getBytes(i);
                        }
                        read++;
                    }
                }
                rows += read;
                if (read == 0) {
                    break;
                }
            }
        }
        if (rows != envelopes) {
            throw new IllegalStateException("the query read " + rows + " rows of " + envelopes);
        }
        return System.nanoTime() - t0;
    }
}
