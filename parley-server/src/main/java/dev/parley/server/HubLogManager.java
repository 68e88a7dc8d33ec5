package dev.parley.server;

import java.util.logging.LogManager;

/**
 * JUL's own shutdown hook resets every handler, which would swallow the log lines of a
 * graceful shutdown. A process that runs a hub selects this manager (system property
 * {@code java.util.logging.manager}) before anything logs; once the JSON handler is
 * installed, resets are ignored and the last lines still reach stderr.
 */
public final class HubLogManager extends LogManager {
    private volatile boolean keepHandlers;

    /** Selects this manager; must run before the first use of java.util.logging. */
    public static void select() {
        System.setProperty("java.util.logging.manager", HubLogManager.class.getName());
    }

    void keepHandlers() {
        keepHandlers = true;
    }

    @Override
    public void reset() {
        if (!keepHandlers) {
            super.reset();
        }
    }
}
