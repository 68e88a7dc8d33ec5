package dev.parley.server.it;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * The records one JUL logger writes while the capture is open, at every level down to FINE
 * (the logger's level is raised for the time and put back on close).
 */
public final class LogCapture extends Handler implements AutoCloseable {
    private static final SimpleFormatter MESSAGES = new SimpleFormatter();
    private final Logger logger;
    private final Level previous;
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();

    private LogCapture(Logger logger) {
        this.logger = logger;
        this.previous = logger.getLevel();
        setLevel(Level.ALL);
        logger.setLevel(Level.FINE);
        logger.addHandler(this);
    }

    /** Captures the logger named {@code name} (the hub's loggers are named after their class). */
    public static LogCapture of(String name) {
        return new LogCapture(Logger.getLogger(name));
    }

    /** The records so far whose message contains {@code text}, in the order they were logged. */
    public List<LogRecord> records(String text) {
        return records.stream().filter(r -> MESSAGES.formatMessage(r).contains(text)).toList();
    }

    /** The messages so far at {@code level} that contain {@code text}. */
    public List<String> messages(Level level, String text) {
        return records(text).stream().filter(r -> r.getLevel().equals(level)).map(MESSAGES::formatMessage).toList();
    }

    @Override
    public void publish(LogRecord record) {
        records.add(record);
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setLevel(previous);
    }
}
