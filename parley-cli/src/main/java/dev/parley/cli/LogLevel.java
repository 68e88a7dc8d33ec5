package dev.parley.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * One {@code --log-level} of {@code parley serve}: {@code LEVEL} for every logger, or
 * {@code LOGGER=LEVEL} for one logger and those under it ({@code dev.parley.store=FINE}).
 * Levels are JUL's names, in any case, or the usual aliases {@code error}, {@code warn},
 * {@code debug} and {@code trace}.
 */
record LogLevel(Optional<String> logger, Level level) {
    private static final Pattern LOGGER_NAME = Pattern.compile("[A-Za-z0-9_$][A-Za-z0-9_$.-]*");
    private static final List<Level> LEVELS = List.of(Level.OFF, Level.SEVERE, Level.WARNING, Level.INFO, Level.CONFIG,
            Level.FINE, Level.FINER, Level.FINEST, Level.ALL);
    private static final Map<String, Level> ALIASES = Map.of("ERROR", Level.SEVERE, "WARN", Level.WARNING,
            "DEBUG", Level.FINE, "TRACE", Level.FINEST);
    /** JUL holds loggers weakly: one collected would forget its level, so the configured ones are kept here. */
    private static final List<Logger> CONFIGURED = new ArrayList<>();

    /** Sets each level, in order: a later one for the same logger wins. */
    static void apply(List<LogLevel> levels) {
        for (LogLevel level : levels) {
            Logger logger = Logger.getLogger(level.logger().orElse(""));
            logger.setLevel(level.level());
            synchronized (CONFIGURED) {
                CONFIGURED.add(logger);
            }
        }
    }

    /** Reads {@code LEVEL} or {@code LOGGER=LEVEL}. */
    static final class Converter implements ITypeConverter<LogLevel> {
        @Override
        public LogLevel convert(String value) {
            int equals = value.lastIndexOf('=');
            Optional<String> logger = equals < 0 ? Optional.empty() : Optional.of(value.substring(0, equals).strip());
            if (logger.isPresent() && !LOGGER_NAME.matcher(logger.get()).matches()) {
                throw new TypeConversionException("'" + logger.get() + "' is not a logger name (e.g. dev.parley.store)");
            }
            String name = value.substring(equals + 1).strip().toUpperCase(Locale.ROOT);
            Optional<Level> level = Optional.ofNullable(ALIASES.get(name))
                    .or(() -> LEVELS.stream().filter(l -> l.getName().equals(name)).findFirst());
            return new LogLevel(logger, level.orElseThrow(() -> new TypeConversionException("'"
                    + value.substring(equals + 1) + "' is not a log level ("
                    + String.join(", ", LEVELS.stream().map(Level::getName).toList()) + ", or error, warn, debug, trace)")));
        }
    }
}
