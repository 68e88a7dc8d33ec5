package dev.parley.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.server.wire.Json;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Structured logs: one JSON object per line on stderr ({@code at, level, logger, msg, error}). */
final class JsonLogFormatter extends Formatter {

    /** Routes all JUL logging (ours, and Jetty's through SLF4J's JUL binding) to stderr as JSON lines. Idempotent. */
    static void install() {
        Logger root = LogManager.getLogManager().getLogger("");
        for (var handler : root.getHandlers()) {
            if (handler.getFormatter() instanceof JsonLogFormatter) {
                return;
            }
            root.removeHandler(handler);
        }
        ConsoleHandler stderr = new ConsoleHandler(); // ConsoleHandler writes to System.err
        stderr.setFormatter(new JsonLogFormatter());
        stderr.setLevel(Level.ALL);
        try {
            stderr.setEncoding(StandardCharsets.UTF_8.name());
        } catch (java.io.UnsupportedEncodingException e) {
            throw new IllegalStateException(e);
        }
        root.addHandler(stderr);
        if (LogManager.getLogManager() instanceof HubLogManager manager) {
            manager.keepHandlers();
        }
    }

    @Override
    public String format(LogRecord record) {
        ObjectNode line = Json.object();
        line.put("at", Json.time(record.getInstant()));
        line.put("level", record.getLevel().getName());
        line.put("logger", record.getLoggerName());
        line.put("msg", formatMessage(record));
        if (record.getThrown() != null) {
            StringWriter trace = new StringWriter();
            record.getThrown().printStackTrace(new PrintWriter(trace));
            line.put("error", trace.toString());
        }
        return new String(Json.bytes(line), StandardCharsets.UTF_8) + System.lineSeparator();
    }
}
