package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.AuditQuery;
import dev.parley.core.AuditRecord;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.JsonText;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.Route;
import dev.parley.core.SchemaStore;
import dev.parley.core.StoredSchema;
import dev.parley.core.Trace;
import dev.parley.core.TraceContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The audit log's filters and pruning, the rule kept with envelopes, and stored payload schemas. */
class SqliteAuditAndSchemasTest {
    private static final Instant T0 = Instant.parse("2026-11-22T10:00:00.000Z");

    @TempDir
    Path dir;
    private SqliteStore store;

    private SqliteStore open() {
        store = SqliteStore.open(dir, envelope -> { }, (count, nanos) -> { });
        return store;
    }

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    private static AuditEntry entry(int second, String action, AuditEntry.Decision decision, Optional<String> rule) {
        return new AuditEntry(T0.plusSeconds(second), "a" + (second % 2), action, "t", decision, "why", Optional.empty(),
                "p-000000000000", rule);
    }

    private static List<Integer> seconds(List<AuditRecord> records) {
        return records.stream().map(r -> (int) (r.entry().at().getEpochSecond() - T0.getEpochSecond())).toList();
    }

    private static AuditQuery all(int limit) {
        return new AuditQuery(Optional.empty(), Optional.empty(), limit);
    }

    @Test
    void filtersCombineAndPagesFollowBefore() {
        open();
        for (int s = 0; s < 10; s++) {
            store.audit(entry(s, s < 5 ? "send" : "node.create", s % 3 == 0 ? AuditEntry.Decision.DENY
                    : AuditEntry.Decision.ALLOW, s % 3 == 0 ? Optional.of("r" + (s % 2)) : Optional.empty()));
        }
        assertEquals(List.of(9, 8, 7, 6, 5, 4, 3, 2, 1, 0), seconds(store.audit(all(100))));
        assertEquals(List.of(9, 3), seconds(store.audit(new AuditQuery(Optional.empty(), Optional.empty(),
                Optional.of("r1"), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), 100))));
        AuditRecord denied = store.audit(new AuditQuery(Optional.empty(), Optional.empty(), Optional.of("r0"),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), 100)).getFirst();
        assertEquals(Optional.of("r0"), denied.entry().rule());
        assertEquals(List.of(4, 3, 2, 1, 0), seconds(store.audit(new AuditQuery(Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.of("send"), Optional.empty(), Optional.empty(), Optional.empty(), 100))));
        assertEquals(List.of(5, 4, 3), seconds(store.audit(new AuditQuery(Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.of(T0.plusSeconds(3)), Optional.of(T0.plusSeconds(6)),
                Optional.empty(), 100))), "since inclusive, until exclusive");
        assertEquals(List.of(3), seconds(store.audit(new AuditQuery(Optional.of("a1"), Optional.of(AuditEntry.Decision.DENY),
                Optional.empty(), Optional.of("send"), Optional.empty(), Optional.empty(), Optional.empty(), 100))));

        List<AuditRecord> first = store.audit(all(4));
        List<AuditRecord> second = store.audit(all(4).before(first.getLast().id()));
        assertEquals(List.of(9, 8, 7, 6), seconds(first));
        assertEquals(List.of(5, 4, 3, 2), seconds(second));
    }

    /** Opens the store folding new audit entries into the audit's indexes after every batch, or never. */
    private void open(boolean foldEveryBatch) {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES,
                foldEveryBatch ? Duration.ZERO : Duration.ofDays(1));
    }

    private long unfolded() throws SQLException {
        try (var c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
             var rs = c.createStatement().executeQuery("SELECT count(*) FROM audit WHERE folded = 0")) {
            return rs.getLong(1);
        }
    }

    private static AuditEntry between(int second, String actor, String target, Optional<String> rule) {
        return new AuditEntry(T0.plusSeconds(second), actor, "send", target, AuditEntry.Decision.ALLOW, "why",
                Optional.empty(), "p-000000000000", rule);
    }

    private List<Integer> byNode(String node, int limit, Optional<Long> before) {
        return seconds(store.audit(new AuditQuery(Optional.of(node), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), before, limit)));
    }

    private List<Integer> byRule(String rule) {
        return seconds(store.audit(new AuditQuery(Optional.empty(), Optional.empty(), Optional.of(rule),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), 100)));
    }

    @Test
    void nodeAndRuleFiltersFindEntriesWhetherFoldedIntoTheIndexesOrNot() throws SQLException {
        open(true);
        store.audit(between(0, "a", "b", Optional.empty()));
        store.audit(between(1, "b", "a", Optional.of("r")));
        store.audit(between(2, "a", "a", Optional.empty())); // a node's own entry: once, not once per index
        store.audit(between(3, "c", "b", Optional.of("r")));
        store.close(); // the writer's last fold is done once it is closed: each runs after the batch it follows
        assertEquals(0, unfolded(), "folded after every batch");
        open(false);
        store.audit(between(4, "a", "b", Optional.of("r")));
        store.audit(between(5, "a", "a", Optional.empty()));
        store.audit(between(6, "c", "c", Optional.of("s")));
        store.audit(between(7, "b", "a", Optional.empty()));
        assertEquals(4, unfolded(), "nothing folded");

        List<Integer> ofA = List.of(7, 5, 4, 2, 1, 0);
        assertEquals(ofA, byNode("a", 100, Optional.empty()));
        assertEquals(List.of(7, 4, 3, 1, 0), byNode("b", 100, Optional.empty()));
        assertEquals(List.of(6, 3), byNode("c", 100, Optional.empty()));
        assertEquals(List.of(4, 3, 1), byRule("r"));
        assertEquals(List.of(6), byRule("s"));
        // Pages of two, across the folded and unfolded entries.
        List<Integer> paged = new java.util.ArrayList<>();
        List<AuditRecord> page = store.audit(new AuditQuery(Optional.of("a"), Optional.empty(), 2));
        while (!page.isEmpty()) {
            paged.addAll(seconds(page));
            page = store.audit(new AuditQuery(Optional.of("a"), Optional.empty(), 2).before(page.getLast().id()));
        }
        assertEquals(ofA, paged);
        assertEquals(List.of(4), seconds(store.audit(new AuditQuery(Optional.of("b"), Optional.empty(),
                Optional.of("r"), Optional.empty(), Optional.of(T0.plusSeconds(4)), Optional.empty(), Optional.empty(),
                100))), "node, rule and time together");

        store.close();
        open(true);
        store.audit(between(8, "b", "d", Optional.empty()));
        assertEquals(ofA, byNode("a", 100, Optional.empty()));
        assertEquals(List.of(8, 7, 4, 3, 1, 0), byNode("b", 100, Optional.empty()));
        assertEquals(List.of(4, 3, 1), byRule("r"));
        store.close();
        store = null;
        assertEquals(0, unfolded(), "the fold after the next batch took in what waited");
    }

    /** Appends an envelope from {@code from} to {@code to} with its allowed send's entry, as a node's send is. */
    private Envelope send(int second, String from, String to, Optional<String> rule) {
        String id = String.format("0193f0c4-0000-7000-8000-%012d", second);
        Envelope draft = new Envelope(id, 0, NodeId.of(from), NodeId.of(to), "message", Optional.of("hi"),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(),
                T0.plusSeconds(second), new Trace(1, Route.POLICY, "p-000000000000", rule, TraceContext.fresh()));
        return store.append(draft, new AuditEntry(T0.plusSeconds(second), from, "send", to, AuditEntry.Decision.ALLOW,
                "why", Optional.of(id), "p-000000000000", rule), Optional.empty(), Optional.empty()).envelope();
    }

    /** Entries of allowed sends still in their envelopes' rows only. */
    private long uncopied() throws SQLException {
        try (var c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
             var rs = c.createStatement().executeQuery("SELECT count(*) FROM envelopes"
                     + " WHERE pos > (SELECT pos FROM envelopes_folded) AND audit_id IS NOT NULL")) {
            return rs.getLong(1);
        }
    }

    private static AuditEntry denial(int second, String actor, String target) {
        return new AuditEntry(T0.plusSeconds(second), actor, "send", target, AuditEntry.Decision.DENY, "no grant",
                Optional.empty(), "p-000000000000", Optional.empty());
    }

    /** Every way of reading the log, each as the seconds of the entries it gives. */
    private List<List<Integer>> views() {
        List<Integer> paged = new java.util.ArrayList<>();
        List<AuditRecord> page = store.audit(all(1));
        while (!page.isEmpty()) {
            paged.addAll(seconds(page));
            page = store.audit(all(1).before(page.getLast().id()));
        }
        return List.of(seconds(store.audit(all(100))), paged, byNode("a", 100, Optional.empty()),
                byNode("b", 100, Optional.empty()), byRule("r"),
                seconds(store.audit(new AuditQuery(Optional.empty(), Optional.of(AuditEntry.Decision.ALLOW), 100))),
                seconds(store.audit(new AuditQuery(Optional.of("b"), Optional.of(AuditEntry.Decision.DENY), 100))),
                seconds(store.audit(new AuditQuery(Optional.empty(), Optional.empty(), Optional.empty(),
                        Optional.of("send"), Optional.of(T0.plusSeconds(1)), Optional.of(T0.plusSeconds(3)),
                        Optional.empty(), 100))));
    }

    @Test
    void anAllowedSendsEntryIsReadFromItsEnvelopeUntilCopiedAndKeepsItsIdAndPlace() throws SQLException {
        open(false);
        store.audit(between(0, "a", "b", Optional.empty()));
        Envelope sent = send(1, "a", "b", Optional.of("r"));
        store.audit(denial(2, "c", "b"));
        send(3, "b", "a", Optional.empty());
        assertEquals(2, uncopied(), "the sends' entries are in their envelopes' rows");
        assertEquals(2, unfolded(), "and the others in the audit table, not folded yet");

        List<AuditRecord> log = store.audit(all(100));
        assertEquals(new AuditEntry(T0.plusSeconds(1), "a", "send", "b", AuditEntry.Decision.ALLOW, "why",
                Optional.of(sent.id()), "p-000000000000", Optional.of("r")), log.get(2).entry());
        List<List<Integer>> views = List.of(List.of(3, 2, 1, 0), List.of(3, 2, 1, 0), List.of(3, 1, 0),
                List.of(3, 2, 1, 0), List.of(1), List.of(3, 1, 0), List.of(2), List.of(2, 1));
        assertEquals(views, views(), "all, paged by one, by node a and b, by rule, allowed, denied to b, a window");

        store.close(); // its last fold copies them
        assertEquals(0, uncopied());
        assertEquals(0, unfolded());
        open(false);
        assertEquals(log, store.audit(all(100)), "the same entries under the same ids once copied");
        assertEquals(views, views());

        assertEquals(4, store.pruneAudit(T0.plusSeconds(60), 100));
        send(4, "a", "b", Optional.empty());
        store.audit(denial(5, "c", "a"));
        List<AuditRecord> after = store.audit(all(100));
        assertEquals(List.of(5, 4), seconds(after));
        assertTrue(after.getFirst().id() > after.getLast().id(), "ids in the order of the writes, wherever each waits");
    }

    @Test
    void aFoldThatCannotCopyLosesNoEntryAndTheNextCopiesThemInOrder() throws SQLException {
        try (var c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(SqliteStore.FILE_NAME));
             var s = c.createStatement()) {
            open(true); // creates the schema
            store.close();
            s.execute("CREATE TRIGGER no_copy BEFORE INSERT ON audit WHEN NEW.folded = 1"
                    + " BEGIN SELECT RAISE(ROLLBACK, 'injected I/O failure'); END");
            open(true); // a fold after every batch, and each one fails
            send(0, "a", "b", Optional.empty());
            store.audit(denial(1, "c", "a"));
            send(2, "b", "a", Optional.empty());
            store.close();
            store = null;
            assertEquals(2, uncopied(), "no fold could copy them");
            open(true);
            assertEquals(List.of(2, 1, 0), seconds(store.audit(all(100))), "a store reopened reads them where they wait");
            store.close();
            s.execute("DROP TRIGGER no_copy");
        }
        open(true);
        send(3, "a", "b", Optional.empty());
        store.close();
        assertEquals(0, uncopied(), "the next fold copied them all");
        open(true);
        List<AuditRecord> log = store.audit(all(100));
        assertEquals(List.of(3, 2, 1, 0), seconds(log));
        assertEquals(log.stream().map(AuditRecord::id).sorted(java.util.Comparator.reverseOrder()).toList(),
                log.stream().map(AuditRecord::id).toList(), "ids in the order of the writes");
    }

    @Test
    void pruningDeletesOnlyWhatIsOlderThanTheCutoffInBatches() {
        open();
        for (int s = 0; s < 10; s++) {
            store.audit(entry(s, "send", AuditEntry.Decision.ALLOW, Optional.empty()));
        }
        assertEquals(3, store.pruneAudit(T0.plusSeconds(7), 3));
        assertEquals(3, store.pruneAudit(T0.plusSeconds(7), 3));
        assertEquals(1, store.pruneAudit(T0.plusSeconds(7), 3));
        assertEquals(0, store.pruneAudit(T0.plusSeconds(7), 3));
        assertEquals(List.of(9, 8, 7), seconds(store.audit(all(100))));
    }

    @Test
    void theRuleThatAllowedAnEnvelopeIsKeptWithIt() {
        open();
        Envelope draft = new Envelope("0193f0c4-0000-7000-8000-000000000001", 0, NodeId.of("x1"), NodeId.of("w1"),
                "message", Optional.of("hi"), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Map.of(), T0, new Trace(1, Route.POLICY, "p-000000000000", Optional.of("widen"), TraceContext.fresh()));
        store.append(draft, entry(0, "send", AuditEntry.Decision.ALLOW, Optional.of("widen")), Optional.empty(),
                Optional.empty());
        store.close();
        open();
        Envelope stored = store.inboxAfter(NodeId.of("w1"), 0, 10).getFirst();
        assertEquals(draft.trace(), stored.trace());
        assertEquals(draft.trace(), store.message(draft.id()).orElseThrow().envelope().trace());
        assertEquals(Optional.of("widen"), store.audit(all(1)).getFirst().entry().rule());
    }

    @Test
    void schemasAreSetReplacedListedAndRemoved() {
        SqliteSchemas schemas = open().schemas();
        AuditEntry audit = entry(0, "schema.put", AuditEntry.Decision.ALLOW, Optional.empty());
        schemas.putSchema(new StoredSchema("order", new JsonText("{\"type\":\"object\"}"), "s-1", T0), audit);
        schemas.putSchema(new StoredSchema("note", new JsonText("{}"), "s-2", T0), audit);
        schemas.putSchema(new StoredSchema("order", new JsonText("{\"type\":\"array\"}"), "s-3",
                T0.plusSeconds(1)), audit);
        assertEquals(List.of(new StoredSchema("note", new JsonText("{}"), "s-2", T0),
                new StoredSchema("order", new JsonText("{\"type\":\"array\"}"), "s-3", T0.plusSeconds(1))),
                schemas.schemas());
        schemas.deleteSchema("note", audit);
        ParleyException missing = assertThrows(ParleyException.class, () -> schemas.deleteSchema("note", audit));
        assertEquals(ErrorCode.SCHEMA_NOT_FOUND, missing.code());
        assertEquals(List.of("order"), schemas.schemas().stream().map(StoredSchema::kind).toList());
        assertEquals(4, store.audit(all(100)).size(), "three puts and one delete, not the refused delete");
        assertTrue(store.audit(all(100)).stream().allMatch(r -> r.entry().rule().isEmpty()));
    }
}
