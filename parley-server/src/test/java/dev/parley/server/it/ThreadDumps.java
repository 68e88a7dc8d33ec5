package dev.parley.server.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** The threads of this JVM (the hub's among them) as the JVM dumps them, virtual ones included. */
public final class ThreadDumps {
    private ThreadDumps() {
    }

    /**
     * The stack, one frame a line, of every thread with a frame that contains {@code frame};
     * the dump is written (JSON) into {@code dir}, where a failing test's message names it.
     */
    public static List<List<String>> stacksThrough(Path dir, String frame) throws IOException {
        Path dump = dir.resolve("threads-" + UUID.randomUUID() + ".json");
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                .dumpThreads(dump.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
        JsonNode containers = HubFixture.JSON.readTree(dump.toFile()).path("threadDump").path("threadContainers");
        List<List<String>> through = new ArrayList<>();
        for (JsonNode container : containers) {
            for (JsonNode thread : container.path("threads")) {
                List<String> stack = new ArrayList<>();
                thread.path("stack").forEach(f -> stack.add(f.asText()));
                if (stack.stream().anyMatch(f -> f.contains(frame))) {
                    through.add(stack);
                }
            }
        }
        return through;
    }

    /**
     * Fails unless some thread runs through {@code frame} and none of those was called by the edge
     * (Jetty): its frames beneath {@code frame} are the thread's own. Jetty's frames above it are
     * a write under way, which a dump may catch (seen: the A2A stream writing a heartbeat).
     */
    public static void assertServedOffTheEdge(Path dir, String frame) throws IOException {
        List<List<String>> serving = stacksThrough(dir, frame);
        if (serving.isEmpty()) {
            throw new AssertionError("no thread in " + frame + " in a dump of this JVM's threads");
        }
        for (List<String> stack : serving) {
            if (calledByTheEdge(stack, frame)) {
                throw new AssertionError("served on the edge's thread: " + String.join("\n  ", stack));
            }
        }
    }

    /** Whether a frame of Jetty's is beneath (a caller of) the first frame of {@code stack}, top first, that contains {@code frame}. */
    static boolean calledByTheEdge(List<String> stack, String frame) {
        int at = 0;
        while (at < stack.size() && !stack.get(at).contains(frame)) {
            at++;
        }
        return stack.subList(Math.min(at + 1, stack.size()), stack.size()).stream()
                .anyMatch(f -> f.contains("org.eclipse.jetty"));
    }
}
