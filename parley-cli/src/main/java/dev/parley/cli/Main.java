package dev.parley.cli;

import dev.parley.server.HubLogManager;

import java.io.IOException;
import java.io.InputStream;
import java.util.logging.LogManager;

/** Process entry point of the {@code parley} command. */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        // Lets `serve` log its graceful shutdown (see HubLogManager). Set by name, before anything
        // touches JUL: calling a static method of HubLogManager would initialize its superclass
        // LogManager first, which reads this property too early. A class literal does not.
        System.setProperty("java.util.logging.manager", HubLogManager.class.getName());
        routeLogsToStderr();
        System.exit(ParleyCommand.forArgs(args).execute(args));
    }

    /**
     * Installs the bundled JUL configuration (console handler, i.e. stderr) unless the user
     * chose their own, so that no library can log onto stdout, which scripts parse.
     */
    private static void routeLogsToStderr() {
        if (System.getProperty("java.util.logging.config.file") != null
                || System.getProperty("java.util.logging.config.class") != null) {
            return;
        }
        try (InputStream config = Main.class.getResourceAsStream("logging.properties")) {
            if (config != null) {
                LogManager.getLogManager().readConfiguration(config);
            }
        } catch (IOException e) {
            System.err.println("parley: logging configuration not loaded: " + e.getMessage());
        }
    }
}
