package dev.parley.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/** Prepared statements of one connection, prepared once and reused. Not thread-safe. */
final class Statements implements AutoCloseable {
    private final Connection connection;
    private final Map<String, PreparedStatement> prepared = new HashMap<>();

    Statements(Connection connection) {
        this.connection = connection;
    }

    PreparedStatement get(String sql) throws SQLException {
        PreparedStatement statement = prepared.get(sql);
        if (statement == null) {
            statement = connection.prepareStatement(sql);
            prepared.put(sql, statement);
        }
        statement.clearParameters();
        return statement;
    }

    Connection connection() {
        return connection;
    }

    @Override
    public void close() {
        prepared.values().forEach(s -> {
            try {
                s.close();
            } catch (SQLException ignored) {
                // closing: nothing to recover
            }
        });
        try {
            connection.close();
        } catch (SQLException ignored) {
            // closing: nothing to recover
        }
    }
}
