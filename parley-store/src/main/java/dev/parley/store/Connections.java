package dev.parley.store;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/** Opens SQLite connections with the settings every Parley connection needs. */
final class Connections {
    private Connections() {
    }

    /**
     * WAL lets readers proceed while the writer commits; synchronous=FULL syncs the WAL on
     * every commit, which is what makes an accepted envelope survive a crash.
     */
    static Connection open(Path file, boolean writer) throws SQLException {
        Connection connection = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
        try (Statement s = connection.createStatement()) {
            s.execute("PRAGMA busy_timeout = 10000");
            s.execute("PRAGMA journal_mode = WAL");
            s.execute("PRAGMA synchronous = FULL");
            s.execute("PRAGMA temp_store = MEMORY");
            s.execute("PRAGMA cache_size = -32768");
            if (!writer) {
                s.execute("PRAGMA query_only = 1");
            }
        }
        return connection;
    }
}
