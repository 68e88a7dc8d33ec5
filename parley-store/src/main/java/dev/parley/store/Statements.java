package dev.parley.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/**
 * Prepared statements of one connection, prepared once and reused. Not thread-safe.
 * sqlite-jdbc closes a statement for good when running it fails (every later use says
 * "statement is not executing"), so whoever sees an {@link SQLException} from one of these
 * statements calls {@link #discard()} before the next use.
 */
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

    /** Closes every prepared statement; the next {@link #get} prepares afresh. The connection stays open. */
    void discard() {
        prepared.values().forEach(s -> {
            try {
                s.close();
            } catch (SQLException ignored) {
                // a statement that failed may refuse to close: it is dropped either way
            }
        });
        prepared.clear();
    }

    @Override
    public void close() {
        discard();
        try {
            connection.close();
        } catch (SQLException ignored) {
            // closing: nothing to recover
        }
    }
}
