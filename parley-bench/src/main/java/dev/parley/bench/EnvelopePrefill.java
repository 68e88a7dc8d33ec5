package dev.parley.bench;

import dev.parley.store.InboxOrder;
import dev.parley.store.SqliteStore;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * BENCH-ONLY: fills a hub's store with many envelopes fast, for {@code bench growth}. Never
 * used by the hub, and never on a data directory that a hub is running on.
 *
 * <p>Sending 10^7 envelopes over HTTP would take hours here, so this writes rows straight into
 * {@code parley.db}: it copies a <em>template</em>, the envelope and audit rows that one real
 * send through the hub wrote (so kind, route, policy version and audit fields are whatever the
 * hub writes today), and inserts {@code count} more of them with fresh UUIDv7 ids (older than
 * any live id), consecutive seqs per inbox continuing after the inbox's head, the given text,
 * and marked delivered (so that an SSE stream opened without a cursor has nothing to replay,
 * like a hub whose readers have kept up). Envelopes are spread round-robin over the inboxes,
 * each from one of the senders; each gets its audit entry in its row and in the audit table, as a
 * real send has once the hub's fold copied it (the store must have been closed cleanly, so that
 * nothing waits to be copied). The inboxes' order is the hub's to build from the rows when it
 * opens the store again (store.SideIndexes). One transaction
 * per 100,000 rows, in the store's own WAL mode but without fsync (a machine crash during
 * prefill could ruin the temporary store, nothing else); the WAL is checkpointed at the end.
 */
final class EnvelopePrefill {
    private static final int TX_ROWS = 100_000;

    private EnvelopePrefill() {
    }

    /** Inserts {@code count} envelopes (and their audit rows) into the store in {@code dataDir}. Returns rows/s. */
    static double fill(Path dataDir, String[] inboxIds, String[] senderIds, long count, String text, PrintWriter err)
            throws SQLException {
        Path file = dataDir.resolve(SqliteStore.FILE_NAME);
        long t0 = System.nanoTime();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath())) {
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA busy_timeout = 10000");
                s.execute("PRAGMA synchronous = OFF");
                s.execute("PRAGMA cache_size = -524288");
                s.execute("PRAGMA temp_store = MEMORY");
            }
            Map<String, Object> envelope = template(c, "SELECT * FROM envelopes ORDER BY pos DESC LIMIT 1");
            if (!template(c, "SELECT (SELECT pos FROM envelopes_folded) = max(pos) AS folded FROM envelopes").get("folded")
                    .equals(1)) {
                throw new IllegalStateException("prefill: the store has envelopes not folded yet; close its hub first");
            }
            Map<String, Object> audit = template(c, "SELECT * FROM audit WHERE envelope_id = '" + envelope.get("id") + "'");
            long auditId = ((Number) template(c, "SELECT max((SELECT coalesce(max(id), 0) FROM audit),"
                    + " (SELECT coalesce(max(audit_id), 0) FROM envelopes)) AS last").get("last")).longValue();
            Map<String, Long> heads = new HashMap<>();
            try (Connection reader = SqliteStore.openReader(dataDir); // with the inboxes' order beside the store
                 PreparedStatement head = reader.prepareStatement(InboxOrder.HEAD)) {
                for (String inbox : inboxIds) {
                    head.setString(1, inbox);
                    try (ResultSet rs = head.executeQuery()) {
                        heads.put(inbox, rs.next() ? rs.getLong(1) : 0L);
                    }
                }
            }
            c.setAutoCommit(false);
            SecureRandom random = new SecureRandom();
            long base = System.currentTimeMillis() - 86_400_000L - count; // all before any live envelope
            try (PreparedStatement insertEnvelope = c.prepareStatement("INSERT INTO envelopes (id, to_node, seq, from_node, "
                    + "kind, text, data, corr_id, thread_id, message_id, meta, created_at, attempt, route, policy_version, "
                    + "state, delivered_at, topic, rule, audit_id, audit_at, audit_actor, audit_action, audit_target, "
                    + "audit_reason, audit_policy_version, audit_rule) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, "
                    + "NULL, ?, ?, ?, ?, 'delivered', ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
                 // folded is left to its default (1): the prefilled entries are in the audit's indexes already
                 PreparedStatement insertAudit = c.prepareStatement("INSERT INTO audit (id, at, actor, action, target, "
                         + "reason, policy_version, rule, decision, envelope_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                String kind = (String) envelope.get("kind");
                int attempt = ((Number) envelope.get("attempt")).intValue();
                String route = (String) envelope.get("route");
                String policyVersion = (String) envelope.get("policy_version");
                String rule = (String) envelope.get("rule");
                for (long i = 0; i < count; i++) {
                    String to = inboxIds[(int) (i % inboxIds.length)];
                    String from = senderIds[(int) ((i / inboxIds.length + i) % senderIds.length)];
                    long seq = heads.merge(to, 1L, Long::sum);
                    long at = base + i;
                    long msb = (at << 16) | 0x7000L | (i & 0xFFF);
                    long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
                    String id = new UUID(msb, lsb).toString();
                    insertEnvelope.setString(1, id);
                    insertEnvelope.setString(2, to);
                    insertEnvelope.setLong(3, seq);
                    insertEnvelope.setString(4, from);
                    insertEnvelope.setString(5, kind);
                    insertEnvelope.setString(6, text);
                    insertEnvelope.setLong(7, at);
                    insertEnvelope.setInt(8, attempt);
                    insertEnvelope.setString(9, route);
                    insertEnvelope.setString(10, policyVersion);
                    insertEnvelope.setLong(11, at + 1);
                    insertEnvelope.setString(12, rule);
                    auditId++;
                    bindAudit(insertEnvelope, 13, auditId, at, from, to, audit);
                    insertEnvelope.addBatch();
                    bindAudit(insertAudit, 1, auditId, at, from, to, audit);
                    insertAudit.setString(9, (String) audit.get("decision"));
                    insertAudit.setString(10, id);
                    insertAudit.addBatch();
                    if ((i + 1) % 1000 == 0 || i + 1 == count) {
                        insertEnvelope.executeBatch();
                        insertAudit.executeBatch();
                    }
                    if ((i + 1) % TX_ROWS == 0 || i + 1 == count) {
                        try (Statement s = c.createStatement()) { // the hub's fold's mark: their entries are copied
                            s.execute("UPDATE envelopes_folded SET pos = (SELECT max(pos) FROM envelopes)");
                        }
                        c.commit();
                        if ((i + 1) % (10L * TX_ROWS) == 0 || i + 1 == count) {
                            BenchSupport.progress(err, String.format(Locale.ROOT, "prefill: %,d of %,d envelopes (%.0f/s)",
                                    i + 1, count, (i + 1) / ((System.nanoTime() - t0) / 1e9)));
                        }
                    }
                }
            }
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA wal_checkpoint(TRUNCATE)");
            }
        }
        return count / ((System.nanoTime() - t0) / 1e9);
    }

    /** Binds an entry's id, at, actor, action, target, reason, policy version and rule from {@code first} on. */
    private static void bindAudit(PreparedStatement statement, int first, long id, long at, String from, String to,
                                  Map<String, Object> audit) throws SQLException {
        statement.setLong(first, id);
        statement.setLong(first + 1, at);
        statement.setString(first + 2, from);
        statement.setString(first + 3, (String) audit.get("action"));
        statement.setString(first + 4, to);
        statement.setString(first + 5, (String) audit.get("reason"));
        statement.setString(first + 6, (String) audit.get("policy_version"));
        statement.setString(first + 7, (String) audit.get("rule"));
    }

    private static Map<String, Object> template(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            if (!rs.next()) {
                throw new IllegalStateException("prefill: no template row for " + sql);
            }
            Map<String, Object> row = new HashMap<>();
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                row.put(rs.getMetaData().getColumnName(i), rs.getObject(i));
            }
            return row;
        }
    }
}
