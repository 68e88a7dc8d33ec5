package dev.parley.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.logging.Logger;

/**
 * Versioned schema migrations. The schema version lives in SQLite's {@code user_version};
 * each migration runs in its own transaction together with the version bump, so a crash
 * mid-migration leaves the previous version intact.
 */
final class Migrations {
    private static final Logger LOG = Logger.getLogger(Migrations.class.getName());
    /** In order; the position + 1 is the version a script brings the schema to. */
    private static final List<String> SCRIPTS = List.of(
            "V1__hub_core.sql",
            "V2__delivery.sql",
            "V3__admission.sql",
            "V4__policy.sql",
            "V5__task_webhooks.sql",
            "V6__federation.sql",
            "V7__relay_positions.sql",
            "V8__gateway_invites.sql",
            "V9__agents.sql",
            "V10__claims.sql",
            "V11__capabilities.sql",
            "V12__schedules.sql",
            "V13__chat.sql",
            "V14__chat_irc.sql",
            "V15__traces.sql",
            "V16__schedule_scan_order.sql",
            "V17__audit_folding.sql",
            "V18__send_audit_in_envelopes.sql",
            "V19__audit_node_index.sql",
            "V20__inbox_order.sql",
            "V21__inbox_order_beside.sql");

    private Migrations() {
    }

    static int latest() {
        return SCRIPTS.size();
    }

    static void apply(Connection connection) throws SQLException {
        applyUpTo(connection, SCRIPTS.size());
    }

    /** Brings the schema to {@code target}: all of them for a store, an earlier one for a test of a later migration. */
    static void applyUpTo(Connection connection, int target) throws SQLException {
        int current = version(connection);
        if (current > SCRIPTS.size()) {
            throw new SQLException("the database has schema version " + current + " but this build knows only up to "
                    + SCRIPTS.size() + "; use a newer parley");
        }
        if (current > 0 && current < target) { // an upgrade may rewrite a table (V20): say why the start waits
            LOG.info("upgrading the store's schema from version " + current + " to " + target);
        }
        for (int v = current; v < target; v++) {
            int version = v + 1;
            String script = SCRIPTS.get(v);
            try {
                Connections.inTransaction(connection, () -> {
                    try (Statement statement = connection.createStatement()) {
                        for (String sql : statements(read(script))) {
                            statement.execute(sql);
                        }
                        statement.execute("PRAGMA user_version = " + version);
                    }
                    return null;
                });
            } catch (SQLException e) {
                throw new SQLException("migration " + script + " failed: " + e.getMessage(), e);
            }
        }
    }

    static int version(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
             var rs = statement.executeQuery("PRAGMA user_version")) {
            return rs.next() ? rs.getInt(1) : 0;
        }
    }

    /** Splits a script on semicolons at line ends, dropping comment lines. */
    private static List<String> statements(String script) {
        StringBuilder cleaned = new StringBuilder();
        for (String line : script.split("\n")) {
            if (!line.strip().startsWith("--")) {
                cleaned.append(line).append('\n');
            }
        }
        return List.of(cleaned.toString().split(";\\s*\n")).stream().map(String::strip).filter(s -> !s.isEmpty()).toList();
    }

    private static String read(String name) {
        try (InputStream in = Migrations.class.getResourceAsStream("migrations/" + name)) {
            if (in == null) {
                throw new IllegalStateException("missing migration resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
