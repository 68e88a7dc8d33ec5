package dev.parley.store;

import dev.parley.core.Appended;
import dev.parley.core.AuditEntry;
import dev.parley.core.AuditQuery;
import dev.parley.core.AuditRecord;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.DeliveryState;
import dev.parley.core.Envelope;
import dev.parley.core.ErrorCode;
import dev.parley.core.EventStore;
import dev.parley.core.Grant;
import dev.parley.core.GrantTarget;
import dev.parley.core.GraphSnapshot;
import dev.parley.core.MessageRecord;
import dev.parley.core.Node;
import dev.parley.core.InboxSummary;
import dev.parley.core.NodeId;
import dev.parley.core.NodeKind;
import dev.parley.core.Notifier;
import dev.parley.core.ParleyException;
import dev.parley.core.Chats;
import dev.parley.core.Sealer;
import dev.parley.core.StoreHealth;
import dev.parley.core.TaskTap;
import dev.parley.core.TimelineEntry;
import dev.parley.core.Transition;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The hub's store on one SQLite file ({@code <data>/parley.db}): a single writer with
 * group commit for every change and a pool of readers that never wait for it.
 */
public final class SqliteStore implements EventStore {
    public static final String FILE_NAME = "parley.db";
    /** The name of the one thread that writes to the store (profiles and benchmarks tell it apart by it). */
    public static final String WRITER_THREAD = "parley-writer";
    /** The thread that answers and announces each committed batch, in commit order. */
    public static final String ANNOUNCER_THREAD = "parley-announcer";
    /** The thread that keeps the store's side indexes ({@link SideIndexes}). */
    public static final String SIDE_INDEXES_THREAD = "parley-side-indexes";
    private static final int READERS = 4;
    /** How many seqs one query of {@link #unackedAfter} looks at. */
    private static final int UNACKED_WINDOW = 1024;
    /**
     * How often the writer folds new envelopes' audit entries into the audit table while writes
     * come in. Longer intervals make longer folds, which the next batch waits for; shorter ones
     * write the by-rule index's pages more often. Measured when the fold wrote the inboxes' order
     * too (BENCHMARKS.md, "Issue 15, stop 45": 25 ms gave a lower p99 and 7 % fewer sends, 400 ms
     * the reverse, both when each fold's commit was fsynced; stop 46, unsynced: 50 ms made the
     * pauses 40 % shorter for one point more of the writer's time, left for an A/B on a fast day).
     */
    static final Duration AUDIT_FOLD_EVERY = Duration.ofMillis(100);
    /** The writer's upkeep ({@link Ledger#fold}), as the log names it. */
    static final String FOLD = "the fold of new envelopes' entries into the audit log";
    /** How often at most the side indexes take in what was committed and folded since: the folds' own pace. */
    static final Duration SIDE_INDEXES_EVERY = AUDIT_FOLD_EVERY;

    /** Shared with the other parts of the store (deliveries, topics, tasks): one writer, one read pool. */
    private final Writer writer;
    private final ReadPool readers;
    /** Taps on task changes, shared by every {@link SqliteTasks} of this store. */
    private final List<TaskTap> taskTaps = new java.util.concurrent.CopyOnWriteArrayList<>();

    private final Checkpointer checkpointer;
    private final SideIndexes sideIndexes;
    private final DeliveryMarks marks;

    private SqliteStore(Writer writer, ReadPool readers, Checkpointer checkpointer, SideIndexes sideIndexes) {
        this.writer = writer;
        this.readers = readers;
        this.checkpointer = checkpointer;
        this.sideIndexes = sideIndexes;
        this.marks = new DeliveryMarks(writer);
    }

    /** Opens (creating when needed) the store in {@code dataDir} and brings its schema up to date. */
    public static SqliteStore open(Path dataDir, Notifier notifier, CommitObserver observer) {
        return open(dataDir, notifier, observer, Checkpointer.RESTART_AT_BYTES, AUDIT_FOLD_EVERY);
    }

    /**
     * A query-only connection to the store file in {@code dataDir}, opened as the store's own
     * readers are (SQLite's mode, page cache and pragmas): for a bench that runs its own queries
     * over a store it has closed, so that they cost what the store's would.
     */
    public static Connection openReader(Path dataDir) throws SQLException {
        Path file = dataDir.resolve(FILE_NAME);
        Connection connection = Connections.open(file, Connections.Role.READER);
        try {
            SideIndexes.attach(connection, file);
        } catch (SQLException e) {
            connection.close();
            throw e;
        }
        return connection;
    }

    /**
     * {@link #open(Path, Notifier, CommitObserver)} with the WAL size at which the log is restarted
     * and how often new audit entries are folded into the audit's indexes.
     */
    static SqliteStore open(Path dataDir, Notifier notifier, CommitObserver observer, long walRestartBytes,
                            Duration auditFoldEvery) {
        return open(dataDir, notifier, observer, walRestartBytes, auditFoldEvery, SIDE_INDEXES_EVERY);
    }

    /**
     * {@link #open(Path, Notifier, CommitObserver, long, Duration)}, and how often the side indexes
     * take in the rows committed and folded since ({@link SideIndexes}).
     */
    static SqliteStore open(Path dataDir, Notifier notifier, CommitObserver observer, long walRestartBytes,
                            Duration auditFoldEvery, Duration sideIndexesEvery) {
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create data directory " + dataDir, e);
        }
        Path file = dataDir.resolve(FILE_NAME);
        try {
            try (var connection = Connections.open(file, Connections.Role.WRITER)) {
                Migrations.apply(connection); // before the side indexes, which read the schema's tables
            }
            SideIndexes sideIndexes = SideIndexes.open(file, sideIndexesEvery);
            Writer writer = new Writer(() -> {
                var connection = Connections.open(file, Connections.Role.WRITER);
                try {
                    Connections.limitWal(connection, walRestartBytes);
                    SideIndexes.attach(connection, file);
                } catch (SQLException e) {
                    connection.close();
                    throw e;
                }
                return connection;
            }, notifier, observer, new Writer.Upkeep(FOLD, auditFoldEvery, Ledger::fold));
            ReadPool readers = new ReadPool(file, READERS);
            sideIndexes.start(readers);
            writer.afterEachUpkeep(sideIndexes::folded);
            Checkpointer checkpointer = new Checkpointer(file, writer, readers, walRestartBytes, Checkpointer.FSYNC);
            writer.afterEachCommit(checkpointer::committed);
            return new SqliteStore(writer, readers, checkpointer, sideIndexes);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot open store " + file + ": " + e.getMessage(), e);
        }
    }

    /** Delivery policies, the schedule and dead letters, on the same writer and readers. */
    public SqliteDeliveries deliveries(Sealer sealer) {
        return new SqliteDeliveries(writer, readers, sealer);
    }

    /** Topic subscriptions and fan-out, on the same writer and readers. */
    public SqliteTopics topics() {
        return new SqliteTopics(writer, readers);
    }

    /** Delegated tasks, on the same writer and readers. */
    public SqliteTasks tasks() {
        return new SqliteTasks(writer, readers, taskTaps);
    }

    /**
     * Adds a tap to every task change, through every {@link SqliteTasks} of this store
     * (those made before the call too): its envelopes commit with the change.
     */
    public void tapTasks(TaskTap tap) {
        taskTaps.add(tap);
    }

    /** The webhooks that follow tasks; their secrets are kept sealed. */
    public SqliteTaskWebhooks taskWebhooks(Sealer sealer) {
        return new SqliteTaskWebhooks(writer, readers, sealer);
    }

    /** Managed agents' specs, on the same writer and readers. */
    public SqliteClaims claims() {
        return new SqliteClaims(writer, readers);
    }

    public SqliteChats chats(Sealer sealer) {
        return new SqliteChats(writer, readers, sealer);
    }

    /** Scheduled sends, on the same writer and readers: a firing appends like any send. */
    public SqliteSchedules schedules() {
        return new SqliteSchedules(writer, readers);
    }

    public SqliteTraces traces() {
        return new SqliteTraces(writer, readers);
    }

    public SqliteCapabilities capabilities() {
        return new SqliteCapabilities(writer, readers);
    }

    public SqliteAgents agents() {
        return new SqliteAgents(writer, readers);
    }

    /** Mirrors, the relay's marks and ingest cursors of federation, on the same writer and readers. */
    public SqliteFederation federation() {
        return new SqliteFederation(writer, readers, taskTaps);
    }

    // --- admission by invite and rate limits ---
    /** Invites, nonces, redeemed tickets, node keys and rate overrides, on the same writer and readers. */
    public SqliteAdmissions admissions() {
        return new SqliteAdmissions(writer, readers);
    }

    @Override
    public GraphSnapshot loadGraph() {
        return readers.read(s -> {
            List<Node> nodes = new ArrayList<>();
            Set<NodeId> retired = new HashSet<>();
            Map<NodeId, String> tokens = new HashMap<>();
            Map<NodeId, String> owners = new HashMap<>();
            try (var rs = s.get("SELECT id, kind, parent, depth, labels, token_hash, created_at, deleted_at, gateway"
                    + " FROM nodes").executeQuery()) {
                while (rs.next()) {
                    NodeId id = new NodeId(rs.getString(1));
                    rs.getLong(8);
                    if (!rs.wasNull()) {
                        retired.add(id);
                        continue;
                    }
                    nodes.add(new Node(id, NodeKind.parse(rs.getString(2)),
                            Optional.ofNullable(rs.getString(3)).map(NodeId::new), Rows.stringMap(rs.getString(5)),
                            rs.getInt(4), Instant.ofEpochMilli(rs.getLong(7))));
                    String hash = rs.getString(6);
                    if (hash != null) {
                        tokens.put(id, hash);
                    }
                    String gateway = rs.getString(9);
                    if (gateway != null) {
                        owners.put(id, gateway);
                    }
                }
            }
            List<Grant> grants = new ArrayList<>();
            try (var rs = s.get("SELECT id, from_node, to_node, expires_at, note, created_at FROM grants").executeQuery()) {
                while (rs.next()) {
                    Optional<Instant> expiresAt = Rows.optionalMillis(rs, 4);
                    grants.add(new Grant(rs.getString(1), new NodeId(rs.getString(2)), GrantTarget.parse(rs.getString(3)),
                            expiresAt, rs.getString(5), Instant.ofEpochMilli(rs.getLong(6))));
                }
            }
            return new GraphSnapshot(nodes, retired, tokens, grants, owners);
        });
    }

    @Override
    public void createNode(Node node, String tokenHash, AuditEntry audit) {
        writer.submit(tx -> {
            Ledger.insertNode(tx.statements(), node, tokenHash, Optional.empty());
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void deleteNode(NodeId id, Instant at, AuditEntry audit) {
        writer.submit(tx -> {
            var update = tx.statements().get(
                    "UPDATE nodes SET deleted_at = ?, token_hash = NULL WHERE id = ? AND deleted_at IS NULL");
            update.setLong(1, at.toEpochMilli());
            update.setString(2, id.value());
            if (update.executeUpdate() == 0) {
                throw new ParleyException(ErrorCode.NODE_NOT_FOUND, "node " + id + " does not exist");
            }
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void replaceToken(NodeId id, String tokenHash, AuditEntry audit) {
        writer.submit(tx -> {
            var update = tx.statements().get("UPDATE nodes SET token_hash = ? WHERE id = ? AND deleted_at IS NULL");
            update.setString(1, tokenHash);
            update.setString(2, id.value());
            if (update.executeUpdate() == 0) {
                throw new ParleyException(ErrorCode.NODE_NOT_FOUND, "node " + id + " does not exist");
            }
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void createGrant(Grant grant, AuditEntry audit) {
        writer.submit(tx -> {
            // On a gateway the grant is shared before this commit: its echo may have been mirrored already.
            Ledger.insertGrant(tx.statements(), grant);
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void deleteGrant(String grantId, AuditEntry audit) {
        writer.submit(tx -> {
            // On a gateway the grant is withdrawn before this commit: its echo may have dropped it already.
            var delete = tx.statements().get("DELETE FROM grants WHERE id = ?");
            delete.setString(1, grantId);
            delete.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void audit(AuditEntry entry) {
        writer.submit(tx -> {
            Ledger.insertAudit(tx, entry);
            return null;
        });
    }

    @Override
    public Appended append(Envelope draft, AuditEntry audit, Optional<String> answers, Optional<Instant> replyBy) {
        return writer.submit(tx -> Ledger.send(tx, draft, audit, answers, replyBy));
    }

    @Override
    public List<Appended> appendBatch(List<Send> sends, List<AuditEntry> refusals) {
        return writer.submit(tx -> {
            List<Appended> appended = new ArrayList<>(sends.size());
            for (Send send : sends) {
                appended.add(Ledger.send(tx, send.draft(), send.audit(), Optional.empty(), send.replyBy()));
            }
            for (AuditEntry refusal : refusals) {
                Ledger.insertAudit(tx, refusal);
            }
            return appended;
        });
    }

    @Override
    public Transition apply(String envelopeId, DeliveryEvent event, Instant at, AuditEntry audit) {
        return writer.submit(tx -> {
            Transition transition = Ledger.applyEvent(tx.statements(), envelopeId, event, at, false);
            if (!(transition instanceof Transition.Refused)) {
                Ledger.insertAudit(tx, audit);
            }
            return transition;
        });
    }

    @Override
    public void markDelivered(List<Envelope> delivered, Instant at, Optional<Duration> redeliverAfter,
                              Runnable whileWaiting) {
        if (delivered.isEmpty()) {
            return;
        }
        marks.add(delivered, at, redeliverAfter, whileWaiting);
    }

    @Override
    public void markDeliveredNow(List<Envelope> delivered, Instant at, Optional<Duration> redeliverAfter) {
        if (delivered.isEmpty()) {
            return;
        }
        try {
            writer.submit(tx -> {
                tx.delivered(Ledger.markDelivered(tx.statements(), delivered, at, redeliverAfter), at);
                return null;
            });
        } catch (ParleyException e) {
            // reads go on while the store cannot be written: the marks wait with the streams' while their inbox has room
            boolean unwritable = e.code() == ErrorCode.STORAGE_FULL || e.code() == ErrorCode.INTERNAL;
            if (!unwritable || !marks.offer(delivered, at, redeliverAfter)) {
                throw e;
            }
        }
    }

    @Override
    public Optional<MessageRecord> message(String id) {
        return readers.read(s -> {
            var select = s.get("SELECT " + Rows.ENVELOPE_COLUMNS + ", state, delivered_at FROM envelopes WHERE id = ?");
            select.setString(1, id);
            Envelope envelope;
            DeliveryState state;
            List<TimelineEntry> timeline = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                envelope = Rows.envelope(rs);
                state = DeliveryState.parse(rs.getString(Rows.AFTER_ENVELOPE));
                timeline.add(new TimelineEntry(DeliveryState.ACCEPTED, envelope.createdAt(), ""));
                long deliveredAt = rs.getLong(Rows.AFTER_ENVELOPE + 1);
                if (!rs.wasNull()) {
                    timeline.add(new TimelineEntry(DeliveryState.DELIVERED, Instant.ofEpochMilli(deliveredAt), ""));
                }
            }
            var steps = s.get("SELECT state, at, detail FROM timeline WHERE envelope_id = ? ORDER BY rowid");
            steps.setString(1, id);
            try (var rs = steps.executeQuery()) {
                while (rs.next()) {
                    timeline.add(new TimelineEntry(DeliveryState.parse(rs.getString(1)), Instant.ofEpochMilli(rs.getLong(2)),
                            rs.getString(3)));
                }
            }
            timeline.sort(Comparator.comparing(TimelineEntry::at));
            return Optional.of(new MessageRecord(envelope, state, timeline));
        });
    }

    @Override
    public List<Envelope> inboxAfter(NodeId node, long after, int limit) {
        return readers.read(s -> {
            long mark; // read first: the order holds every envelope up to it when it is read next (InboxOrder)
            try (var rs = s.get(InboxOrder.MARK).executeQuery()) {
                mark = rs.getLong(1);
            }
            var folded = s.get(InboxOrder.FOLDED_AFTER);
            folded.setString(1, node.value());
            folded.setLong(2, after);
            folded.setInt(3, limit);
            Page page = new Page();
            if (page.take(folded, limit) || page.envelopes.size() == limit) {
                return page.envelopes;
            }
            var past = s.get(InboxOrder.PAST_AFTER);
            past.setLong(1, mark);
            past.setString(2, node.value());
            past.setLong(3, page.envelopes.isEmpty() ? after : page.envelopes.getLast().seq());
            past.setInt(4, limit - page.envelopes.size());
            page.take(past, limit);
            return page.envelopes;
        });
    }

    @Override
    public List<Envelope> undeliveredAfter(NodeId node, long after, int limit) {
        return envelopes("SELECT " + Rows.ENVELOPE_COLUMNS + " FROM envelopes INDEXED BY envelopes_undelivered"
                + " WHERE to_node = ? AND seq > ? AND delivered_at IS NULL ORDER BY seq LIMIT ?", node, limit, after);
    }

    /**
     * No index serves this (one would cost every send and every ack); it walks the inbox by
     * seq in windows, so a long settled history costs one pass, a window at a time, and never
     * holds a reader for long.
     */
    @Override
    public List<Envelope> unackedAfter(NodeId node, long after, int limit) {
        long head = headSeq(node);
        for (long from = after; from < head; from += UNACKED_WINDOW) {
            List<Envelope> page = envelopes("SELECT " + Rows.ENVELOPE_COLUMNS + " FROM envelopes WHERE pos IN ("
                    + InboxOrder.positions("?1", "seq > ?2 AND seq <= ?3") + ") AND state NOT IN ("
                    + Ledger.SETTLED_STATES + ") ORDER BY pos LIMIT ?4", node, limit, from, from + UNACKED_WINDOW);
            if (!page.isEmpty()) {
                return page;
            }
        }
        return List.of();
    }

    @Override
    public List<Envelope> conversation(NodeId node, String group, long upTo, int limit) {
        return readers.read(s -> {
            // chat meta counts on people's messages only
            var select = s.get(InboxOrder.newestFirst(Rows.ENVELOPE_COLUMNS_OF_E, "e.seq <= ?2 AND json_extract(e.meta, '$.\""
                    + Chats.GROUP + "\"') = ?3 AND e.from_node LIKE '" + Chats.HUMAN_PREFIX + "%'", "?4"));
            select.setString(1, node.value());
            select.setLong(2, upTo);
            select.setString(3, group);
            select.setInt(4, limit);
            List<Envelope> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(Rows.envelope(rs));
                }
            }
            return out;
        });
    }

    @Override
    public long headSeq(NodeId node) {
        return readers.read(s -> {
            var select = s.get(InboxOrder.HEAD);
            select.setString(1, node.value());
            try (var rs = select.executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0L;
            }
        });
    }

    private static final String AUDIT_SELECT = "SELECT " + Ledger.AUDIT_COLUMNS + " FROM audit";
    /**
     * The entries not folded yet, read through their own index: left to itself, SQLite takes
     * {@code audit_by_at} for a query with a time window and reads every entry in it.
     */
    private static final String UNFOLDED_SELECT = AUDIT_SELECT + " INDEXED BY audit_unfolded";
    /**
     * Folded entries by node, through the node index's postings: the outer query sees the audit's
     * columns and the posting's node, and the postings' order by id serves {@code ORDER BY id DESC}.
     * The condition checks the entry's actor or target as well, so a posting that does not match
     * its entry (an index left from an older copy of the store) selects nothing.
     */
    static final String NODE_INDEXED_SELECT = "SELECT " + Ledger.AUDIT_COLUMNS + " FROM (SELECT p.node AS node,"
            + " p.id AS id, a.at AS at, a.actor AS actor, a.action AS action, a.target AS target,"
            + " a.decision AS decision, a.reason AS reason, a.envelope_id AS envelope_id,"
            + " a.policy_version AS policy_version, a.rule AS rule FROM " + SideIndexes.SCHEMA
            + ".postings p JOIN audit a ON a.id = p.id)";
    /**
     * Folded entries past the node index's mark, read by position: the few (about 100 ms of them)
     * the index has not taken in yet. Left to itself SQLite takes {@code audit_by_at} for a query
     * with a time window and reads every entry in it.
     */
    static final String NOT_INDEXED_YET_SELECT = AUDIT_SELECT + " NOT INDEXED";
    /** The entries of allowed sends still in their envelopes' rows, not copied to the audit table yet. */
    private static final String UNCOPIED_SELECT = "SELECT * FROM (" + Ledger.UNCOPIED_AUDIT + ")";

    /** A condition of an audit query and the values of its parameters. */
    private record AuditCondition(String where, List<Object> args) {
    }

    /** One part of a union of audit queries: what it selects from, and its own condition. */
    private record AuditPart(String select, AuditCondition condition) {
    }

    @Override
    public List<AuditRecord> audit(AuditQuery query) {
        // Only the filters given take part in the statement, so each stays an indexed lookup;
        // the few shapes this produces are prepared once each.
        List<AuditCondition> filters = new ArrayList<>();
        query.decision().ifPresent(d -> filters.add(new AuditCondition("decision = ?", List.of(d.wire()))));
        query.rule().ifPresent(r -> filters.add(new AuditCondition("rule = ?", List.of(r))));
        query.action().ifPresent(a -> filters.add(new AuditCondition("action = ?", List.of(a))));
        query.since().ifPresent(t -> filters.add(new AuditCondition("at >= ?", List.of(t.toEpochMilli()))));
        query.until().ifPresent(t -> filters.add(new AuditCondition("at < ?", List.of(t.toEpochMilli()))));
        query.before().ifPresent(id -> filters.add(new AuditCondition("id < ?", List.of(id))));
        // The by-node and by-rule indexes hold folded entries only (Ledger.fold): a filter on
        // either reads the newest matches from them and from the few entries not folded yet. The
        // by-node index is in a file of its own, kept up to a mark (SideIndexes); folded entries
        // past the mark are read by position. The entries of the allowed sends not copied yet
        // are read from their envelopes' rows.
        List<AuditPart> parts = new ArrayList<>();
        query.node().ifPresentOrElse(n -> {
            parts.add(new AuditPart(NODE_INDEXED_SELECT,
                    new AuditCondition("node = ? AND (actor = ? OR target = ?)", List.of(n, n, n))));
            parts.add(new AuditPart(NOT_INDEXED_YET_SELECT, new AuditCondition("folded = 1 AND id > (SELECT audit_mark FROM "
                    + SideIndexes.SCHEMA + ".indexed) AND (actor = ? OR target = ?)", List.of(n, n))));
            parts.add(new AuditPart(UNFOLDED_SELECT,
                    new AuditCondition("folded = 0 AND (actor = ? OR target = ?)", List.of(n, n))));
            parts.add(new AuditPart(UNCOPIED_SELECT, new AuditCondition("(actor = ? OR target = ?)", List.of(n, n))));
        }, () -> {
            if (query.rule().isPresent()) {
                parts.add(new AuditPart(AUDIT_SELECT, new AuditCondition("folded = 1", List.of())));
                parts.add(new AuditPart(UNFOLDED_SELECT, new AuditCondition("folded = 0", List.of())));
            } else {
                parts.add(new AuditPart(AUDIT_SELECT, new AuditCondition("1 = 1", List.of())));
            }
            parts.add(new AuditPart(UNCOPIED_SELECT, new AuditCondition("1 = 1", List.of())));
        });
        StringBuilder sql = new StringBuilder();
        List<Object> args = new ArrayList<>();
        for (AuditPart part : parts) {
            sql.append(sql.isEmpty() ? "" : " UNION ").append("SELECT * FROM (");
            auditWhere(sql, args, part, filters);
            sql.append(" ORDER BY id DESC LIMIT ?)");
            args.add(query.limit());
        }
        sql.append(" ORDER BY id DESC LIMIT ?");
        args.add(query.limit());
        return readers.read(s -> {
            var select = s.get(sql.toString());
            for (int i = 0; i < args.size(); i++) {
                if (args.get(i) instanceof Long l) {
                    select.setLong(i + 1, l);
                } else if (args.get(i) instanceof Integer n) {
                    select.setInt(i + 1, n);
                } else {
                    select.setString(i + 1, (String) args.get(i));
                }
            }
            List<AuditRecord> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(new AuditRecord(rs.getLong(1), new AuditEntry(Instant.ofEpochMilli(rs.getLong(2)),
                            rs.getString(3), rs.getString(4), rs.getString(5),
                            AuditEntry.Decision.valueOf(rs.getString(6).toUpperCase(java.util.Locale.ROOT)),
                            rs.getString(7), Optional.ofNullable(rs.getString(8)), rs.getString(9),
                            Optional.ofNullable(rs.getString(10)))));
                }
            }
            return out;
        });
    }

    /** Appends {@code SELECT … WHERE part AND filters…} and the values of its parameters. */
    private static void auditWhere(StringBuilder sql, List<Object> args, AuditPart part, List<AuditCondition> filters) {
        sql.append(part.select()).append(" WHERE ").append(part.condition().where());
        args.addAll(part.condition().args());
        for (AuditCondition filter : filters) {
            sql.append(" AND ").append(filter.where());
            args.addAll(filter.args());
        }
    }

    @Override
    public int pruneAudit(Instant cutoff, int max) {
        return writer.submit(tx -> {
            Ledger.fold(tx); // an entry still in its envelope's row is pruned like the others
            var delete = tx.statements().get("DELETE FROM audit WHERE id IN (SELECT id FROM audit INDEXED BY audit_by_at"
                    + " WHERE at < ? ORDER BY at LIMIT ?)");
            delete.setLong(1, cutoff.toEpochMilli());
            delete.setInt(2, max);
            return delete.executeUpdate();
        });
    }

    // --- policy rules and payload schemas ---
    /** Payload schemas, on the same writer and readers. */
    public SqliteSchemas schemas() {
        return new SqliteSchemas(writer, readers);
    }

    /**
     * The backlog counts over the partial index of undelivered envelopes; the last delivery is
     * that of the newest delivered envelope, found walking back from the head.
     */
    @Override
    public InboxSummary inboxSummary(NodeId node) {
        return readers.read(s -> {
            var select = s.get("SELECT (" + InboxOrder.HEAD + "),"
                    + " (SELECT count(*) FROM envelopes WHERE to_node = ?1 AND delivered_at IS NULL),"
                    + " (SELECT delivered_at FROM (" + InboxOrder.newestFirst("e.delivered_at, e.seq",
                            "e.delivered_at IS NOT NULL", "1") + "))");
            select.setString(1, node.value());
            try (var rs = select.executeQuery()) {
                rs.next();
                long delivered = rs.getLong(3);
                Optional<Instant> lastDelivered = rs.wasNull() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(delivered));
                return new InboxSummary(node, rs.getLong(1), rs.getLong(2), lastDelivered);
            }
        });
    }

    @Override
    public long backlog() {
        return readers.read(s -> {
            try (var rs = s.get("SELECT count(*) FROM envelopes WHERE delivered_at IS NULL").executeQuery()) {
                return rs.next() ? rs.getLong(1) : 0L;
            }
        });
    }

    @Override
    public StoreHealth health() {
        return writer.health();
    }

    /** The side indexes, for tests that say when they take rows in. */
    SideIndexes sideIndexes() {
        return sideIndexes;
    }

    @Override
    public void close() {
        writer.close();
        checkpointer.close();
        sideIndexes.close();
        readers.close();
    }

    /** Runs {@code sql} with the parameters node, each of {@code seqs}, limit; the rows up to {@link #PAGE_CHARS}. */
    private List<Envelope> envelopes(String sql, NodeId node, int limit, long... seqs) {
        return readers.read(s -> {
            var select = s.get(sql);
            select.setString(1, node.value());
            for (int i = 0; i < seqs.length; i++) {
                select.setLong(2 + i, seqs[i]);
            }
            select.setInt(2 + seqs.length, limit);
            Page page = new Page();
            page.take(select, limit);
            return page.envelopes;
        });
    }

    /** A page of envelopes read by one or more statements, ending at {@link #PAGE_CHARS} of text and data. */
    private static final class Page {
        final List<Envelope> envelopes = new ArrayList<>();
        private long chars;

        /** Reads {@code select}'s rows into the page; whether it is full by its characters. */
        boolean take(PreparedStatement select, int limit) throws SQLException {
            try (var rs = select.executeQuery()) {
                while (chars < PAGE_CHARS && envelopes.size() < limit && rs.next()) {
                    Envelope envelope = Rows.envelope(rs);
                    envelopes.add(envelope);
                    chars += envelope.contentChars();
                }
            }
            return chars >= PAGE_CHARS;
        }
    }
}
