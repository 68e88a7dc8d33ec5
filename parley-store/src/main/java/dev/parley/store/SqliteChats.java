package dev.parley.store;

import dev.parley.core.ApprovalCard;
import dev.parley.core.AuditEntry;
import dev.parley.core.ChatEvent;
import dev.parley.core.ChatPlatform;
import dev.parley.core.ChatStore;
import dev.parley.core.Chats;
import dev.parley.core.Engagement;
import dev.parley.core.MessagingGroup;
import dev.parley.core.NodeId;
import dev.parley.core.Sealer;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** {@link ChatStore} on the hub's SQLite file: the {@code chat_*} tables. */
public final class SqliteChats implements ChatStore {
    private static final String GROUP_COLUMNS = "id, platform, room, kind, name, unknown_senders, approver, denied_at,"
            + " created_at";
    private static final String CARD_COLUMNS = "id, kind, group_id, approver, raised_at, platform, room, room_kind,"
            + " room_name, user_id, user_name, message_id, text, mentions, thread, reply_id, reply_from, reply_text,"
            + " said_at, user_tz";
    private static final String APPROVER = "approver";

    private final Writer writer;
    private final ReadPool readers;
    private final Sealer sealer;

    SqliteChats(Writer writer, ReadPool readers, Sealer sealer) {
        this.writer = writer;
        this.readers = readers;
        this.sealer = sealer;
    }

    @Override
    public Optional<MessagingGroup> group(String platform, String room) {
        return first("SELECT " + GROUP_COLUMNS + " FROM chat_groups WHERE platform = ? AND room = ?",
                SqliteChats::group, platform, room);
    }

    @Override
    public Optional<MessagingGroup> group(String id) {
        return first("SELECT " + GROUP_COLUMNS + " FROM chat_groups WHERE id = ?", SqliteChats::group, id);
    }

    @Override
    public List<MessagingGroup> groups() {
        return readers.read(s -> {
            List<MessagingGroup> out = new ArrayList<>();
            try (var rs = s.get("SELECT " + GROUP_COLUMNS + " FROM chat_groups ORDER BY platform, room").executeQuery()) {
                while (rs.next()) {
                    out.add(group(rs));
                }
            }
            return out;
        });
    }

    @Override
    public void putGroup(MessagingGroup g, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get("INSERT INTO chat_groups (" + GROUP_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?,"
                    + " ?, ?) ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, name = excluded.name, unknown_senders ="
                    + " excluded.unknown_senders, approver = excluded.approver, denied_at = excluded.denied_at");
            upsert.setString(1, g.id());
            upsert.setString(2, g.platform());
            upsert.setString(3, g.room());
            upsert.setString(4, g.kind().wire());
            upsert.setString(5, g.name());
            upsert.setString(6, g.unknownSenders().wire());
            Rows.setNullable(upsert, 7, g.approver().map(NodeId::value));
            Rows.setNullableMillis(upsert, 8, g.deniedAt());
            upsert.setLong(9, g.createdAt().toEpochMilli());
            upsert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public List<MessagingGroup.Wiring> wirings(String groupId) {
        return readers.read(s -> {
            var select = s.get("SELECT group_id, agent, mode, pattern, scope, ignored FROM chat_wirings WHERE group_id = ?"
                    + " ORDER BY agent");
            select.setString(1, groupId);
            List<MessagingGroup.Wiring> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(new MessagingGroup.Wiring(rs.getString(1), new NodeId(rs.getString(2)),
                            wire(Engagement.Mode.values(), rs.getString(3)), Optional.ofNullable(rs.getString(4)),
                            wire(Engagement.SenderScope.values(), rs.getString(5)),
                            wire(Engagement.Ignored.values(), rs.getString(6))));
                }
            }
            return out;
        });
    }

    @Override
    public void wire(MessagingGroup.Wiring w, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get("INSERT OR REPLACE INTO chat_wirings (group_id, agent, mode, pattern, scope,"
                    + " ignored) VALUES (?, ?, ?, ?, ?, ?)");
            upsert.setString(1, w.groupId());
            upsert.setString(2, w.agent().value());
            upsert.setString(3, w.mode().wire());
            Rows.setNullable(upsert, 4, w.pattern());
            upsert.setString(5, w.scope().wire());
            upsert.setString(6, w.ignored().wire());
            upsert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void unwire(String groupId, NodeId agent, AuditEntry audit) {
        writer.submit(tx -> {
            var delete = tx.statements().get("DELETE FROM chat_wirings WHERE group_id = ? AND agent = ?");
            delete.setString(1, groupId);
            delete.setString(2, agent.value());
            delete.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public Optional<NodeId> identity(String platform, String user) {
        return readers.read(s -> {
            var select = s.get("SELECT node FROM chat_identities WHERE platform = ? AND user_id = ?");
            select.setString(1, platform);
            select.setString(2, user);
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(new NodeId(rs.getString(1))) : Optional.empty();
            }
        });
    }

    @Override
    public void bindIdentity(String platform, String user, NodeId node) {
        writer.submit(tx -> {
            var insert = tx.statements().get("INSERT OR IGNORE INTO chat_identities (platform, user_id, node)"
                    + " VALUES (?, ?, ?)");
            insert.setString(1, platform);
            insert.setString(2, user);
            insert.setString(3, node.value());
            insert.executeUpdate();
            return null;
        });
    }

    @Override
    public Optional<Boolean> member(String groupId, NodeId node) {
        return readers.read(s -> {
            var select = s.get("SELECT known FROM chat_members WHERE group_id = ? AND node = ?");
            select.setString(1, groupId);
            select.setString(2, node.value());
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(rs.getInt(1) == 1) : Optional.empty();
            }
        });
    }

    @Override
    public void addMember(String groupId, NodeId node, boolean known, Instant at) {
        writer.submit(tx -> {
            // a passer-by approved later becomes known; a known member never becomes a passer-by again
            var upsert = tx.statements().get("INSERT INTO chat_members (group_id, node, known, joined_at) VALUES (?, ?, ?, ?)"
                    + " ON CONFLICT (group_id, node) DO UPDATE SET known = max(known, excluded.known)");
            upsert.setString(1, groupId);
            upsert.setString(2, node.value());
            upsert.setInt(3, known ? 1 : 0);
            upsert.setLong(4, at.toEpochMilli());
            upsert.executeUpdate();
            return null;
        });
    }

    @Override
    public boolean engaged(String groupId, NodeId agent, String thread) {
        return readers.read(s -> {
            var select = s.get("SELECT 1 FROM chat_threads WHERE group_id = ? AND agent = ? AND thread = ?");
            select.setString(1, groupId);
            select.setString(2, agent.value());
            select.setString(3, thread);
            try (var rs = select.executeQuery()) {
                return rs.next();
            }
        });
    }

    @Override
    public void engage(String groupId, NodeId agent, String thread) {
        writer.submit(tx -> {
            var insert = tx.statements().get("INSERT OR IGNORE INTO chat_threads (group_id, agent, thread) VALUES (?, ?, ?)");
            insert.setString(1, groupId);
            insert.setString(2, agent.value());
            insert.setString(3, thread);
            insert.executeUpdate();
            return null;
        });
    }

    @Override
    public boolean raise(ApprovalCard card, AuditEntry audit) {
        return writer.submit(tx -> {
            ChatEvent e = card.held();
            var insert = tx.statements().get("INSERT OR IGNORE INTO chat_cards (" + CARD_COLUMNS + ", subject)"
                    + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
            insert.setString(1, card.id());
            insert.setString(2, card.kind().wire());
            insert.setString(3, card.groupId());
            Rows.setNullable(insert, 4, card.approver().map(NodeId::value));
            insert.setLong(5, card.raisedAt().toEpochMilli());
            insert.setString(6, e.platform());
            insert.setString(7, e.room());
            insert.setString(8, e.roomKind().wire());
            insert.setString(9, e.roomName());
            insert.setString(10, e.user());
            insert.setString(11, e.userName());
            insert.setString(12, e.messageId());
            insert.setString(13, e.text());
            insert.setInt(14, e.mentionsBot() ? 1 : 0);
            Rows.setNullable(insert, 15, e.thread());
            Rows.setNullable(insert, 16, e.replyTo().map(ChatEvent.Reply::messageId));
            Rows.setNullable(insert, 17, e.replyTo().map(ChatEvent.Reply::from));
            Rows.setNullable(insert, 18, e.replyTo().map(ChatEvent.Reply::text));
            insert.setLong(19, e.at().toEpochMilli());
            Rows.setNullable(insert, 20, e.userTimeZone());
            insert.setString(21, card.kind() == ApprovalCard.Kind.ROOM ? Chats.ROOM_SUBJECT : e.user());
            if (insert.executeUpdate() == 0) {
                return false; // one card per group and sender: another is pending
            }
            Ledger.insertAudit(tx, audit);
            return true;
        });
    }

    @Override
    public Optional<ApprovalCard> card(String id) {
        return first("SELECT " + CARD_COLUMNS + " FROM chat_cards WHERE id = ?", SqliteChats::card, id);
    }

    @Override
    public Optional<ApprovalCard> pendingCard(String groupId, String user) {
        return first("SELECT " + CARD_COLUMNS + " FROM chat_cards WHERE group_id = ? AND subject = ?", SqliteChats::card,
                groupId, user);
    }

    @Override
    public int pendingCardCount() {
        return first("SELECT count(*) FROM chat_cards", rs -> rs.getInt(1)).orElse(0);
    }

    @Override
    public List<ApprovalCard> pendingCards() {
        return readers.read(s -> {
            List<ApprovalCard> out = new ArrayList<>();
            try (var rs = s.get("SELECT " + CARD_COLUMNS + " FROM chat_cards ORDER BY raised_at, id").executeQuery()) {
                while (rs.next()) {
                    out.add(card(rs));
                }
            }
            return out;
        });
    }

    @Override
    public boolean settle(String cardId, AuditEntry audit) {
        return writer.submit(tx -> {
            var delete = tx.statements().get("DELETE FROM chat_cards WHERE id = ?");
            delete.setString(1, cardId);
            if (delete.executeUpdate() == 0) {
                return false;
            }
            Ledger.insertAudit(tx, audit);
            return true;
        });
    }

    @Override
    public void putPlatform(String id, String secret, Optional<String> outboundUrl, Instant at, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get("INSERT OR REPLACE INTO chat_platforms (id, secret, outbound_url, created_at)"
                    + " VALUES (?, ?, ?, ?)");
            upsert.setString(1, id);
            upsert.setString(2, sealer.seal(secret));
            Rows.setNullable(upsert, 3, outboundUrl);
            upsert.setLong(4, at.toEpochMilli());
            upsert.executeUpdate();
            var irc = tx.statements().get("DELETE FROM chat_irc WHERE id = ?"); // one id, one kind of platform
            irc.setString(1, id);
            irc.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public void putIrc(ChatPlatform.Irc irc, Instant at, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get("INSERT OR REPLACE INTO chat_irc (id, host, port, tls, nick, channels,"
                    + " password, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
            upsert.setString(1, irc.id());
            upsert.setString(2, irc.host());
            upsert.setInt(3, irc.port());
            upsert.setInt(4, irc.tls() ? 1 : 0);
            upsert.setString(5, irc.nick());
            upsert.setString(6, String.join("\n", irc.channels()));
            Rows.setNullable(upsert, 7, irc.password().map(sealer::seal));
            upsert.setLong(8, at.toEpochMilli());
            upsert.executeUpdate();
            var bridge = tx.statements().get("DELETE FROM chat_platforms WHERE id = ?"); // one id, one kind of platform
            bridge.setString(1, irc.id());
            bridge.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    @Override
    public List<ChatPlatform> platforms() {
        return readers.read(s -> {
            List<ChatPlatform> out = new ArrayList<>();
            try (var rs = s.get("SELECT id, outbound_url FROM chat_platforms").executeQuery()) {
                while (rs.next()) {
                    out.add(new ChatPlatform.Bridge(rs.getString(1), Optional.ofNullable(rs.getString(2))));
                }
            }
            try (var rs = s.get("SELECT id, host, port, tls, nick, channels, password FROM chat_irc").executeQuery()) {
                while (rs.next()) {
                    String channels = rs.getString(6);
                    out.add(new ChatPlatform.Irc(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getInt(4) == 1,
                            rs.getString(5), channels.isEmpty() ? List.of() : List.of(channels.split("\n")),
                            Optional.ofNullable(rs.getString(7)).map(sealer::open)));
                }
            }
            out.sort(java.util.Comparator.comparing(ChatPlatform::id));
            return out;
        });
    }

    @Override
    public Optional<String> platformSecret(String id) {
        return readers.read(s -> {
            var select = s.get("SELECT secret FROM chat_platforms WHERE id = ?");
            select.setString(1, id);
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(sealer.open(rs.getString(1))) : Optional.empty();
            }
        });
    }

    @Override
    public Optional<String> platformOutbound(String id) {
        return first("SELECT outbound_url FROM chat_platforms WHERE id = ? AND outbound_url IS NOT NULL",
                rs -> rs.getString(1), id);
    }

    @Override
    public List<String> bridgedPlatforms() {
        return readers.read(s -> {
            List<String> out = new ArrayList<>();
            try (var rs = s.get("SELECT id FROM chat_platforms WHERE outbound_url IS NOT NULL ORDER BY id").executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
            return out;
        });
    }

    @Override
    public Optional<Identity> identityOf(NodeId node) {
        return first("SELECT platform, user_id, node FROM chat_identities WHERE node = ?",
                rs -> new Identity(rs.getString(1), rs.getString(2), new NodeId(rs.getString(3))), node.value());
    }

    @Override
    public List<NodeId> humans(String platform) {
        return readers.read(s -> {
            var select = s.get("SELECT node FROM chat_identities WHERE platform = ? ORDER BY node");
            select.setString(1, platform);
            List<NodeId> out = new ArrayList<>();
            try (var rs = select.executeQuery()) {
                while (rs.next()) {
                    out.add(new NodeId(rs.getString(1)));
                }
            }
            return out;
        });
    }

    @Override
    public Optional<NodeId> hubApprover() {
        return readers.read(s -> {
            var select = s.get("SELECT value FROM chat_settings WHERE key = ?");
            select.setString(1, APPROVER);
            try (var rs = select.executeQuery()) {
                return rs.next() && rs.getString(1) != null ? Optional.of(new NodeId(rs.getString(1))) : Optional.empty();
            }
        });
    }

    @Override
    public void hubApprover(Optional<NodeId> node, AuditEntry audit) {
        writer.submit(tx -> {
            var upsert = tx.statements().get("INSERT OR REPLACE INTO chat_settings (key, value) VALUES (?, ?)");
            upsert.setString(1, APPROVER);
            Rows.setNullable(upsert, 2, node.map(NodeId::value));
            upsert.executeUpdate();
            Ledger.insertAudit(tx, audit);
            return null;
        });
    }

    /** Reads one row of a column set. */
    @FunctionalInterface
    private interface Row<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private <T> Optional<T> first(String sql, Row<T> row, String... args) {
        return readers.read(s -> {
            var select = s.get(sql);
            for (int i = 0; i < args.length; i++) {
                select.setString(i + 1, args[i]);
            }
            try (var rs = select.executeQuery()) {
                return rs.next() ? Optional.of(row.read(rs)) : Optional.empty();
            }
        });
    }

    private static MessagingGroup group(ResultSet rs) throws SQLException {
        return new MessagingGroup(rs.getString(1), rs.getString(2), rs.getString(3),
                wire(Engagement.RoomKind.values(), rs.getString(4)), rs.getString(5),
                wire(Engagement.UnknownSenders.values(), rs.getString(6)),
                Optional.ofNullable(rs.getString(7)).map(NodeId::new), Rows.optionalMillis(rs, 8),
                Instant.ofEpochMilli(rs.getLong(9)));
    }

    private static ApprovalCard card(ResultSet rs) throws SQLException {
        String replyId = rs.getString(16);
        Optional<ChatEvent.Reply> reply = replyId == null ? Optional.empty() : Optional.of(new ChatEvent.Reply(replyId,
                java.util.Objects.requireNonNullElse(rs.getString(17), ""),
                java.util.Objects.requireNonNullElse(rs.getString(18), "")));
        ChatEvent held = new ChatEvent(rs.getString(6), rs.getString(7), wire(Engagement.RoomKind.values(),
                rs.getString(8)), rs.getString(9), rs.getString(10), rs.getString(11), rs.getString(12), rs.getString(13),
                rs.getInt(14) == 1, Optional.ofNullable(rs.getString(15)), reply, Instant.ofEpochMilli(rs.getLong(19)),
                Optional.ofNullable(rs.getString(20)));
        return new ApprovalCard(rs.getString(1), wire(ApprovalCard.Kind.values(), rs.getString(2)), rs.getString(3),
                Optional.ofNullable(rs.getString(4)).map(NodeId::new), held, Instant.ofEpochMilli(rs.getLong(5)));
    }

    /** The constant whose wire form (lower case, '-' for '_') is {@code text}. */
    private static <E extends Enum<E>> E wire(E[] values, String text) {
        for (E value : values) {
            if (value.name().toLowerCase(Locale.ROOT).replace('_', '-').equals(text)
                    || value.name().toLowerCase(Locale.ROOT).equals(text)) {
                return value;
            }
        }
        throw new IllegalStateException("stored value '" + text + "' names no " + values[0].getDeclaringClass()
                .getSimpleName());
    }
}
