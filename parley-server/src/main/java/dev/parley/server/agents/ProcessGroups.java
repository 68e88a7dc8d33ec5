package dev.parley.server.agents;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Stream;

/**
 * Processes that run others' work, each in a session and process group of its own (util-linux
 * {@code setsid}, where it is installed), so that ending one ends what it started, also what left
 * it (a double fork). The hub's agents and the CLI's runner turns start and end theirs this way.
 */
public final class ProcessGroups {
    private static final Logger LOG = Logger.getLogger(ProcessGroups.class.getName());
    private static final Optional<String> SETSID = Stream.of("/usr/bin/setsid", "/bin/setsid")
            .filter(path -> Files.isExecutable(Path.of(path))).findFirst();

    private ProcessGroups() {
    }

    /** The command line that runs {@code command} in a process group of its own (the same process: setsid execs). */
    public static List<String> inOwnGroup(List<String> command) {
        List<String> line = new ArrayList<>();
        SETSID.ifPresent(line::add);
        line.addAll(command);
        return line;
    }

    /**
     * Kills a process, its process group (it leads one when started by {@link #inOwnGroup}) and
     * what still descends from it, and waits (5 s at most each) for it and its descendants to be gone.
     */
    public static void kill(ProcessHandle process) {
        List<ProcessHandle> descendants = process.descendants().toList();
        if (SETSID.isPresent() && process.isAlive()) {
            try {
                new ProcessBuilder("kill", "-KILL", "--", "-" + process.pid())
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start().waitFor(5, TimeUnit.SECONDS);
            } catch (IOException e) {
                LOG.log(Level.WARNING, "the process group of " + process.pid() + " cannot be killed", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        descendants.forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.onExit().get(5, TimeUnit.SECONDS);
            for (ProcessHandle d : descendants) {
                d.onExit().get(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.log(Level.WARNING, "process " + process.pid() + " did not end within 5 s of SIGKILL", e);
        }
    }
}
