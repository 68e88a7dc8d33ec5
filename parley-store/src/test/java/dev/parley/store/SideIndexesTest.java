package dev.parley.store;

import dev.parley.core.AuditEntry;
import dev.parley.core.AuditQuery;
import dev.parley.core.AuditRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Semaphore;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The audit's node index in its own file: queries by node give the same entries whether the
 * index has taken them in or not, and a file that cannot be trusted (damaged, another store's,
 * ahead of a restored store, behind after a lost pass) is built again or caught up.
 */
class SideIndexesTest {
    private static final Instant T0 = Instant.parse("2026-12-05T10:00:00.000Z");
    private static final List<String> NODES = List.of("a", "b", "c", "d");

    @TempDir
    Path dir;
    private SqliteStore store;

    /** Folds after every batch; the index takes entries in only when a test says so. */
    private SqliteStore open(Path data) {
        store = SqliteStore.open(data, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, Duration.ZERO,
                Duration.ofDays(1));
        return store;
    }

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    /** Entries {@code from}..{@code to} (seconds after T0) between nodes chosen by the second. */
    private void audit(int from, int to) {
        for (int s = from; s <= to; s++) {
            String actor = NODES.get(s % NODES.size());
            String target = NODES.get((s / NODES.size()) % NODES.size()); // sometimes the actor itself
            store.audit(new AuditEntry(T0.plusSeconds(s), actor, "send", target,
                    s % 5 == 0 ? AuditEntry.Decision.DENY : AuditEntry.Decision.ALLOW, "why", Optional.empty(),
                    "p-000000000000"));
        }
    }

    /** The seconds of every entry of {@code node}, newest first, read in pages of three. */
    private List<Integer> byNode(String node) {
        List<Integer> seconds = new ArrayList<>();
        AuditQuery query = new AuditQuery(Optional.of(node), Optional.empty(), 3);
        List<AuditRecord> page = store.audit(query);
        while (!page.isEmpty()) {
            page.forEach(r -> seconds.add((int) (r.entry().at().getEpochSecond() - T0.getEpochSecond())));
            page = store.audit(query.before(page.getLast().id()));
        }
        return seconds;
    }

    /** What a query by node must give, worked out from the entries as written. */
    private static List<Integer> expected(String node, int from, int to) {
        List<Integer> seconds = new ArrayList<>();
        for (int s = to; s >= from; s--) {
            if (NODES.get(s % NODES.size()).equals(node) || NODES.get((s / NODES.size()) % NODES.size()).equals(node)) {
                seconds.add(s);
            }
        }
        return seconds;
    }

    private void assertEveryNode(int from, int to) {
        for (String node : NODES) {
            assertEquals(expected(node, from, to), byNode(node), "entries of " + node);
        }
    }

    private long postings(Path data) throws SQLException {
        try (var c = DriverManager.getConnection("jdbc:sqlite:" + data.resolve(SideIndexes.FILE_NAME));
             var rs = c.createStatement().executeQuery("SELECT count(*) FROM postings")) {
            return rs.getLong(1);
        }
    }

    @Test
    void queriesByNodeGiveTheSameEntriesBeforeAndAfterTheIndexTakesThemIn() throws SQLException {
        open(dir);
        audit(0, 39);
        assertEveryNode(0, 39); // none taken in: every entry read by position
        store.sideIndexes().catchUp();
        assertTrue(postings(dir) > 0);
        assertEveryNode(0, 39);
        audit(40, 59); // some taken in, some past the mark
        assertEveryNode(0, 59);
        store.sideIndexes().catchUp();
        assertEveryNode(0, 59);
    }

    @Test
    void theQueryByNodeReadsThePostingsAndThenThePositionsPastTheMarkInOrder() throws SQLException {
        open(dir);
        store.close();
        store = null;
        try (var c = Connections.open(dir.resolve(SqliteStore.FILE_NAME), Connections.Role.READER)) {
            c.createStatement().execute("ATTACH DATABASE '" + dir.resolve(SideIndexes.FILE_NAME) + "' AS "
                    + SideIndexes.SCHEMA);
            String indexed = plan(c, SqliteStore.NODE_INDEXED_SELECT + " WHERE node = 'a' AND id < 100"
                    + " AND at >= 0 ORDER BY id DESC LIMIT 10");
            assertTrue(indexed.contains("SEARCH p USING PRIMARY KEY (node=? AND id<?)"), indexed);
            assertFalse(indexed.contains("TEMP B-TREE"), indexed);
            // the entries past the mark by position, even with a time window that audit_by_at would serve
            String pastTheMark = plan(c, SqliteStore.NOT_INDEXED_YET_SELECT + " WHERE folded = 1 AND id > 5"
                    + " AND (actor = 'a' OR target = 'a') AND at >= 0 AND at < 100 ORDER BY id DESC LIMIT 10");
            assertTrue(pastTheMark.contains("USING INTEGER PRIMARY KEY (rowid>?)"), pastTheMark);
            assertFalse(pastTheMark.contains("TEMP B-TREE"), pastTheMark);
        }
    }

    private static String plan(java.sql.Connection c, String query) throws SQLException {
        StringBuilder plan = new StringBuilder();
        try (var rs = c.createStatement().executeQuery("EXPLAIN QUERY PLAN " + query)) {
            while (rs.next()) {
                plan.append(rs.getString(4)).append('\n');
            }
        }
        return plan.toString();
    }

    @Test
    void anIndexLeftFromAnotherStoreIsBuiltAgain() throws Exception {
        Path other = dir.resolve("other");
        open(other);
        audit(100, 119); // other entries under the same ids
        store.sideIndexes().catchUp();
        store.close();
        Path data = dir.resolve("data");
        open(data);
        audit(0, 19);
        store.close();
        Files.copy(other.resolve(SideIndexes.FILE_NAME), data.resolve(SideIndexes.FILE_NAME),
                StandardCopyOption.REPLACE_EXISTING);
        open(data);
        assertEveryNode(0, 19);
        store.sideIndexes().catchUp();
        assertEveryNode(0, 19);
    }

    @Test
    void anIndexAheadOfARestoredCopyOfItsStoreIsBuiltAgain() throws Exception {
        twoRunsWithTheFirstCopyOfPutBack(SqliteStore.FILE_NAME); // the older store beside the newer index
        assertEveryNode(0, 19);
        store.sideIndexes().catchUp();
        assertEveryNode(0, 19);
        assertEquals(expectedPostings(0, 19), postings(dir));
    }

    @Test
    void anIndexThatLostItsLastPassesCatchesUp() throws Exception {
        twoRunsWithTheFirstCopyOfPutBack(SideIndexes.FILE_NAME); // as after a power loss
        assertEveryNode(0, 39);
        store.sideIndexes().catchUp();
        assertEveryNode(0, 39);
        assertEquals(expectedPostings(0, 39), postings(dir));
    }

    /**
     * Entries 0-19, then 20-39, each run closed with the index caught up; then {@code file} as
     * the first run left it (a closed store: no WAL) put back, and the store opened again.
     */
    private void twoRunsWithTheFirstCopyOfPutBack(String file) throws Exception {
        open(dir);
        audit(0, 19);
        store.sideIndexes().catchUp();
        store.close();
        Path earlier = dir.resolve("earlier-" + file);
        Files.copy(dir.resolve(file), earlier);
        open(dir);
        audit(20, 39);
        store.sideIndexes().catchUp();
        store.close();
        Files.copy(earlier, dir.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        open(dir);
    }

    @Test
    void aDamagedIndexIsBuiltAgain() throws Exception {
        open(dir);
        audit(0, 19);
        store.sideIndexes().catchUp();
        store.close();
        Files.write(dir.resolve(SideIndexes.FILE_NAME), "not a database".repeat(1000).getBytes());
        open(dir);
        assertEveryNode(0, 19);
        store.sideIndexes().catchUp();
        assertEveryNode(0, 19);
        assertEquals(expectedPostings(0, 19), postings(dir));
    }

    @Test
    void theFormerFileOfTheNodeIndexIsRemovedAndItsEntriesIndexedAgain() throws Exception {
        open(dir);
        audit(0, 19);
        store.close();
        Path former = dir.resolve("audit-nodes.db"); // what a hub before schema V21 kept beside the store
        Files.move(dir.resolve(SideIndexes.FILE_NAME), former);
        open(dir);
        assertFalse(Files.exists(former));
        store.sideIndexes().catchUp();
        assertEquals(expectedPostings(0, 19), postings(dir));
        assertEveryNode(0, 19);
    }

    @Test
    void postingsOfPrunedEntriesAreDropped() throws Exception {
        open(dir);
        audit(0, 39);
        store.close(); // the last fold runs after the last batch; closing waits for it
        open(dir);
        store.sideIndexes().catchUp();
        assertEquals(expectedPostings(0, 39), postings(dir));
        assertEquals(20, store.pruneAudit(T0.plusSeconds(20), 1000));
        assertEveryNode(20, 39);
        store.sideIndexes().sweep();
        assertEquals(expectedPostings(20, 39), postings(dir));
        assertEveryNode(20, 39);
    }

    @Test
    void theIndexTakesInEachFoldAndWaitsForTheNextOneWhileTheHubIsIdle() throws Exception {
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, Duration.ZERO,
                Duration.ofMillis(1));
        audit(0, 19);
        await().atMost(Duration.ofSeconds(30)).until(() -> postings(dir) == expectedPostings(0, 19));
        // idle: parked until the writer's next fold, not reading the store every interval
        await().atMost(Duration.ofSeconds(30)).until(SideIndexesTest::indexWaitsForAFold);
        audit(20, 29); // the folds after these batches wake it
        await().atMost(Duration.ofSeconds(30)).until(() -> postings(dir) == expectedPostings(0, 29));
        assertEveryNode(0, 29);
    }

    @Test
    void aStartTakesInWhatEarlierRunsFoldedWithoutWaitingForAFold() throws Exception {
        open(dir); // the index takes in nothing by itself
        audit(0, 19);
        store.close();
        assertEquals(0, postings(dir));
        store = SqliteStore.open(dir, e -> { }, CommitObserver.NONE, Checkpointer.RESTART_AT_BYTES, Duration.ZERO,
                Duration.ofMillis(1));
        await().atMost(Duration.ofSeconds(30)).until(() -> postings(dir) == expectedPostings(0, 19)); // no write since
    }

    private static boolean indexWaitsForAFold() {
        return Thread.getAllStackTraces().entrySet().stream()
                .filter(e -> e.getKey().getName().equals(SqliteStore.SIDE_INDEXES_THREAD))
                .anyMatch(e -> Arrays.stream(e.getValue()).anyMatch(f -> f.getClassName().equals(
                        Semaphore.class.getName()) && f.getMethodName().equals("tryAcquire")));
    }

    /** One posting for each entry's actor, and one for its target when that is another node. */
    private static long expectedPostings(int from, int to) {
        long count = 0;
        for (int s = from; s <= to; s++) {
            count += NODES.get(s % NODES.size()).equals(NODES.get((s / NODES.size()) % NODES.size())) ? 1 : 2;
        }
        return count;
    }
}
