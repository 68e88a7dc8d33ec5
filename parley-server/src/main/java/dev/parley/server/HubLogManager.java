package dev.parley.server;

import java.util.logging.LogManager;

/**
 * JUL's own shutdown hook resets every handler, which would swallow the log lines of a
 * graceful shutdown. A process that runs a hub selects this manager before anything
 * touches JUL, by name: {@code System.setProperty("java.util.logging.manager",
 * HubLogManager.class.getName())} (calling any static method here would initialise
 * {@link LogManager} first, too early). Once the JSON handler is installed, resets are
 * ignored and the last lines still reach stderr.
 */
public final class HubLogManager extends LogManager {
    private volatile boolean keepHandlers;

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
