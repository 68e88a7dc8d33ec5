package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.Chats;
import dev.parley.core.Envelope;
import dev.parley.core.InboxSummary;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.core.TraceContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An inbox read in seq order is the same whether its envelopes are in {@code inbox_order} (in the
 * side indexes) or past the order's mark, and whichever side of the mark a page starts or ends on;
 * the writer never writes the order.
 */
class InboxOrderTest {
    private static final Instant T0 = Instant.parse("2026-12-05T10:00:00Z");
    private static final NodeId A = NodeId.of("inbox-a");
    private static final NodeId B = NodeId.of("inbox-b");
    private static final String GROUP = "g1";

    @TempDir
    Path dir;
    private SqliteStore store;
    private int sent;

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    /**
     * Opens the store with the writer folding after every batch and the side indexes taking
     * envelopes into the order only when it opens and when a test says so ({@link SideIndexes#catchUp}).
     */
    private void open() {
        open(Duration.ZERO);
    }

    private void open(Duration foldEvery) {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, foldEvery,
                Duration.ofDays(1));
    }

    @Test
    void anInboxReadsTheSameWhetherItsEnvelopesAreInTheOrderOrPastTheMark() throws SQLException {
        open();
        List<Envelope> ofA = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ofA.add(send(A, i % 2 == 0)); // seqs 1 and 3 from a person in the group
            if (i < 3) {
                send(B, false);
            }
        }
        assertEquals(7, pastMark(), "the writer's folds write no order");
        store.sideIndexes().catchUp();
        assertEquals(0, pastMark());
        for (int i = 0; i < 3; i++) {
            ofA.add(send(A, i == 1)); // seq 6 from a person in the group
            if (i < 2) {
                send(B, false);
            }
        }
        assertEquals(5, pastMark(), "nothing taken in since");

        List<Long> all = List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L);
        for (int page = 1; page <= 8; page++) {
            assertEquals(all, paged(A, page), "pages of " + page);
        }
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), paged(B, 2));
        assertEquals(List.of(4L, 5L, 6L, 7L), seqs(store.inboxAfter(A, 3, 100)), "from the last folded one");
        assertEquals(List.of(5L), seqs(store.inboxAfter(A, 4, 1)), "the first past the mark");
        assertEquals(List.of(), seqs(store.inboxAfter(A, 7, 10)));
        assertEquals(7, store.headSeq(A));
        assertEquals(5, store.headSeq(B));
        assertEquals(0, store.headSeq(NodeId.of("inbox-none")));
        assertEquals(all, seqs(store.unackedAfter(A, 0, 100)));
        assertEquals(List.of(3L, 4L, 5L, 6L), seqs(store.unackedAfter(A, 2, 4)));
        assertEquals(List.of(6L, 3L, 1L), seqs(store.conversation(A, GROUP, 7, 10)), "newest first, across the mark");
        assertEquals(List.of(6L, 3L), seqs(store.conversation(A, GROUP, 7, 2)));
        assertEquals(List.of(3L, 1L), seqs(store.conversation(A, GROUP, 5, 10)), "up to a seq before the mark's side");

        assertEquals(new InboxSummary(A, 7, 7, Optional.empty()), store.inboxSummary(A));
        store.markDeliveredNow(ofA.subList(0, 2), T0.plusSeconds(50), Optional.empty()); // both folded
        assertEquals(new InboxSummary(A, 7, 5, Optional.of(T0.plusSeconds(50))), store.inboxSummary(A));
        store.markDeliveredNow(ofA.subList(4, 5), T0.plusSeconds(60), Optional.empty()); // past the mark
        assertEquals(new InboxSummary(A, 7, 4, Optional.of(T0.plusSeconds(60))), store.inboxSummary(A));

        store.close();
        assertEquals(0, pastMark(), "a store closed takes the last envelopes into the order");
        open();
        assertEquals(8, send(A, false).seq());
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L), paged(A, 3));
    }

    @Test
    void passesBetweenThePagesOfAReadLoseAndRepeatNothing() throws SQLException {
        open();
        List<Long> read = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            send(A, false);
        }
        long after = 0;
        while (read.size() < 30) {
            List<Envelope> page = store.inboxAfter(A, after, 3);
            page.forEach(e -> read.add(e.seq()));
            if (!page.isEmpty()) {
                after = page.getLast().seq();
            }
            if (store.headSeq(A) < 30) {
                send(A, false);
                send(B, false);
                store.sideIndexes().catchUp(); // what was past the mark moves into the order
            }
        }
        List<Long> expected = new ArrayList<>();
        for (long seq = 1; seq <= 30; seq++) {
            expected.add(seq);
        }
        assertEquals(expected, read);
    }

    /**
     * A page is read in three statements, each its own snapshot: a pass of the side indexes
     * between any two of them moves envelopes from past the mark into the order, and the page
     * still has each once.
     */
    @Test
    void aPassBetweenTheStatementsOfAPageLosesAndRepeatsNothing() throws SQLException {
        open();
        for (int i = 0; i < 4; i++) {
            send(A, false);
        }
        store.sideIndexes().catchUp();
        for (int i = 0; i < 3; i++) {
            send(A, false); // seqs 5..7 past the mark
        }
        try (Connection reader = SqliteStore.openReader(dir)) {
            long mark = mark(reader);
            store.sideIndexes().catchUp(); // a pass between the mark and the order: 5..7 are in the order now
            assertEquals(List.of(3L, 4L, 5L, 6L, 7L), page(reader, mark, 2, 10));
            assertEquals(List.of(3L, 4L), page(reader, mark, 2, 2));

            send(A, false); // seq 8 past the new mark
            mark = mark(reader);
            List<Long> folded = part(reader, InboxOrder.FOLDED_AFTER, A.value(), 6L, 10);
            store.sideIndexes().catchUp(); // a pass between the order and what lies past the mark: 8 is in it now
            List<Long> past = part(reader, InboxOrder.PAST_AFTER, mark, A.value(), folded.getLast(), 10 - folded.size());
            assertEquals(List.of(7L), folded);
            assertEquals(List.of(8L), past);
        }
    }

    /**
     * A pass that fails (as on a full disk) leaves the order where it was: reads take the rest by
     * position, sends go on, and the next pass that works takes it all in.
     */
    @Test
    void aFailingPassLeavesEveryReadWholeAndHoldsNoSend() throws SQLException {
        open();
        for (int i = 0; i < 3; i++) {
            send(A, false);
        }
        store.sideIndexes().catchUp();
        try (Connection side = Connections.open(dir.resolve(SideIndexes.FILE_NAME), Connections.Role.WRITER)) {
            side.createStatement().execute("CREATE TRIGGER full BEFORE INSERT ON inbox_order"
                    + " BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END");
            for (int i = 0; i < 4; i++) {
                send(A, false);
            }
            assertThrows(SQLException.class, () -> store.sideIndexes().catchUp());
            assertEquals(4, pastMark());
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L), paged(A, 2));
            assertEquals(7, store.headSeq(A));
            side.createStatement().execute("DROP TRIGGER full");
        }
        store.sideIndexes().catchUp();
        assertEquals(0, pastMark());
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L), paged(A, 3));
    }

    @Test
    void aStoreClosesAndOpensWhenItsOrderCannotBeCaughtUp() throws SQLException {
        open();
        try (Connection side = Connections.open(dir.resolve(SideIndexes.FILE_NAME), Connections.Role.WRITER)) {
            side.createStatement().execute("CREATE TRIGGER full BEFORE INSERT ON inbox_order"
                    + " BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END");
        }
        for (int i = 0; i < 3; i++) {
            send(A, false);
        }
        store.close(); // its last pass fails: they are past the mark when the store opens
        open();
        assertEquals(3, pastMark());
        assertEquals(List.of(1L, 2L, 3L), paged(A, 2));
        assertEquals(4, send(A, false).seq());
        try (Connection side = Connections.open(dir.resolve(SideIndexes.FILE_NAME), Connections.Role.WRITER)) {
            side.createStatement().execute("DROP TRIGGER full");
        }
        store.sideIndexes().catchUp();
        assertEquals(0, pastMark());
    }

    @Test
    void anOrderAheadOfARestoredCopyOfItsStoreIsBuiltAgain() throws Exception {
        twoRunsWithTheFirstCopyOfPutBack(SqliteStore.FILE_NAME); // the older store beside the newer order
        assertEquals(List.of(1L, 2L, 3L, 4L), paged(A, 3));
        assertEquals(4, store.headSeq(A));
        assertEquals(5, send(A, false).seq(), "seqs go on from the restored store's");
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), paged(A, 2));
    }

    @Test
    void anOrderThatLostItsLastPassesCatchesUpAsTheStoreOpens() throws Exception {
        twoRunsWithTheFirstCopyOfPutBack(SideIndexes.FILE_NAME); // as after a power loss
        assertEquals(0, pastMark());
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L), paged(A, 3));
        assertEquals(8, send(A, false).seq());
    }

    @Test
    void aDamagedOrderIsBuiltAgain() throws Exception {
        open();
        for (int i = 0; i < 5; i++) {
            send(A, false);
        }
        store.close();
        Files.write(dir.resolve(SideIndexes.FILE_NAME), "not a database".repeat(1000).getBytes());
        open();
        assertEquals(0, pastMark());
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), paged(A, 2));
        assertEquals(6, send(A, false).seq());
    }

    /**
     * Seqs 1-4 of inbox a, then 5-7, each run closed with the order caught up; then {@code file}
     * as the first run left it (a closed store: no WAL) put back, and the store opened again.
     */
    private void twoRunsWithTheFirstCopyOfPutBack(String file) throws Exception {
        open();
        for (int i = 0; i < 4; i++) {
            send(A, false);
        }
        store.sideIndexes().catchUp();
        store.close();
        Path earlier = dir.resolve("earlier-" + file);
        Files.copy(dir.resolve(file), earlier);
        open(Duration.ofDays(1)); // no fold before the close: the audit's mark stays, the order's alone moves
        for (int i = 0; i < 3; i++) {
            send(A, false);
        }
        store.sideIndexes().catchUp();
        store.close();
        Files.copy(earlier, dir.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        open();
    }

    private static long mark(Connection reader) throws SQLException {
        try (var rs = reader.createStatement().executeQuery(InboxOrder.MARK)) {
            return rs.getLong(1);
        }
    }

    /** A page as {@link SqliteStore#inboxAfter} reads it, from a mark read before. */
    private static List<Long> page(Connection reader, long mark, long after, int limit) throws SQLException {
        List<Long> out = new ArrayList<>(part(reader, InboxOrder.FOLDED_AFTER, A.value(), after, limit));
        if (out.size() < limit) {
            out.addAll(part(reader, InboxOrder.PAST_AFTER, mark, A.value(), out.isEmpty() ? after : out.getLast(),
                    limit - out.size()));
        }
        return out;
    }

    /** The seqs one statement of a page gives. */
    private static List<Long> part(Connection reader, String sql, Object... parameters) throws SQLException {
        try (var select = reader.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                select.setObject(i + 1, parameters[i]);
            }
            List<Long> seqs = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    seqs.add(rs.getLong(2));
                }
            }
            return seqs;
        }
    }

    @Test
    void aStoreOfTheSchemaBeforeTheOrderKeepsEveryInboxInItsOrder() throws SQLException {
        Path file = dir.resolve(SqliteStore.FILE_NAME);
        try (Connection c = Connections.open(file, Connections.Role.WRITER)) {
            Migrations.applyUpTo(c, 19);
            insertRows(c, 9);
            c.createStatement().execute("UPDATE audit_copied SET pos = 6"); // the last three past the mark
        }
        open();
        try (Connection c = SqliteStore.openReader(dir);
             var s = c.createStatement()) {
            assertEquals(Migrations.latest(), Migrations.version(c));
            try (var rs = s.executeQuery("PRAGMA integrity_check")) {
                assertEquals("ok", rs.getString(1));
            }
            try (var rs = s.executeQuery("SELECT count(*) FROM main.sqlite_schema WHERE name = 'inbox_order'")) {
                assertEquals(0, rs.getLong(1), "the order is not in the store any more");
            }
            try (var rs = s.executeQuery("SELECT count(*), max(pos) FROM " + SideIndexes.SCHEMA + ".inbox_order")) {
                assertEquals(9, rs.getLong(1), "every envelope's order, built beside the store as it opened");
                assertEquals(9, rs.getLong(2));
            }
            Set<String> indexes = new TreeSet<>();
            try (var rs = s.executeQuery("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'envelopes'")) {
                while (rs.next()) {
                    indexes.add(rs.getString(1));
                }
            }
            assertEquals(Set.of("sqlite_autoindex_envelopes_1", "envelopes_by_message_id", "envelopes_undelivered",
                    "envelopes_replies", "envelopes_tasks"), indexes, "the ids' index kept, the inbox order's gone");
        }
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), paged(A, 4));
        assertEquals(List.of(1L, 2L, 3L), paged(B, 1));
        assertEquals(6, store.headSeq(A));
        assertTrue(store.message("0193f0c4-0000-7000-8000-000000000008").isPresent(), "found by id");
        assertEquals(7, send(A, false).seq());
        assertEquals(4, send(B, false).seq());
    }

    /**
     * Writes {@code count} envelope rows straight into the store's table, as no hub would: two of
     * every three to a, one to b, their seqs from 1 ({@link #seqIn}).
     */
    private static void insertRows(Connection c, int count) throws SQLException {
        try (var insert = c.prepareStatement("INSERT INTO envelopes (id, to_node, seq, from_node, kind, text, meta,"
                + " created_at, attempt, route, policy_version, state, trace_context)"
                + " VALUES (?, ?, ?, 'lead', 'message', 'hi', '{}', ?, 1, 'policy', 'p-000000000000', 'accepted', NULL)")) {
            for (int i = 0; i < count; i++) {
                insert.setString(1, String.format("0193f0c4-0000-7000-8000-%012d", i));
                insert.setString(2, (i % 3 == 2 ? B : A).value());
                insert.setLong(3, seqIn(i));
                insert.setLong(4, T0.plusSeconds(i).toEpochMilli());
                insert.addBatch();
            }
            insert.executeBatch();
        }
    }

    @Test
    void aStoreOpensWithTheOrderOfAHistoryLongerThanAPassBuilt() throws SQLException {
        open();
        store.close();
        try (Connection c = Connections.open(dir.resolve(SqliteStore.FILE_NAME), Connections.Role.WRITER)) {
            insertRows(c, 10_000); // as a restored store without its side file would have them
            c.createStatement().execute("UPDATE envelopes_folded SET pos = (SELECT max(pos) FROM envelopes)");
        }
        open();
        assertEquals(0, pastMark(), "three pages of the order taken in before the store served");
        assertEquals(6_667, store.headSeq(A));
        assertEquals(3_333, store.headSeq(B));
        List<Long> ofB = paged(B, 1000);
        assertEquals(3_333, ofB.size());
        assertEquals(3_333L, ofB.getLast());
        assertEquals(6_668, send(A, false).seq());
    }

    /** The seq of the {@code i}th row written by the migration test: a gets 1..6 and b 1..3, in turn. */
    private static long seqIn(int i) {
        return i % 3 == 2 ? i / 3 + 1 : (i / 3) * 2 + i % 3 + 1;
    }

    /** Appends an envelope to {@code to}: from a person in the group when {@code chat}, as a chat adapter sends. */
    private Envelope send(NodeId to, boolean chat) {
        int n = sent++;
        String id = String.format("0193f0c4-0000-7000-9000-%012d", n);
        String from = chat ? Chats.HUMAN_PREFIX + "alice" : "lead";
        Map<String, String> meta = chat ? Map.of(Chats.GROUP, GROUP) : Map.of();
        Envelope draft = new Envelope(id, 0, NodeId.of(from), to, "message", Optional.of("hi " + n), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), meta, T0.plusSeconds(n),
                new Trace(1, Route.POLICY, "p-000000000000", Optional.empty(), TraceContext.fresh()));
        return store.append(draft, new AuditEntry(T0.plusSeconds(n), from, "send", to.value(), AuditEntry.Decision.ALLOW,
                "why", Optional.of(id), "p-000000000000", Optional.empty()), Optional.empty(), Optional.empty()).envelope();
    }

    /** Every seq of {@code inbox}, read in pages of {@code size}. */
    private List<Long> paged(NodeId inbox, int size) {
        List<Long> out = new ArrayList<>();
        long after = 0;
        for (List<Envelope> page = store.inboxAfter(inbox, after, size); !page.isEmpty();
             page = store.inboxAfter(inbox, after, size)) {
            assertTrue(page.size() <= size);
            page.forEach(e -> out.add(e.seq()));
            after = page.getLast().seq();
        }
        return out;
    }

    private static List<Long> seqs(List<Envelope> envelopes) {
        return envelopes.stream().map(Envelope::seq).toList();
    }

    /** Envelopes written past the order's mark. */
    private long pastMark() throws SQLException {
        try (var c = SqliteStore.openReader(dir);
             var rs = c.createStatement().executeQuery("SELECT count(*) FROM envelopes WHERE pos > (" + InboxOrder.MARK + ")")) {
            return rs.getLong(1);
        }
    }
}
