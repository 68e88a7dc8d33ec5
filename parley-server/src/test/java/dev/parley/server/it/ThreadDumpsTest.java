package dev.parley.server.it;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What a dumped stack says of who serves a stream: its callers, not a write under way above it. */
class ThreadDumpsTest {
    private static final String STREAM = "a2a.A2aAgent.stream";

    /** The stack a dump caught in a clean-clone ./test (A2aStreamsAtStopTest), shortened: a stream of its own, writing. */
    @Test
    void aStreamOfItsOwnCaughtWritingThroughJettyIsServedOffTheEdge() {
        List<String> writing = List.of(
                "java.base/sun.nio.ch.SocketDispatcher.writev0(Native Method)",
                "org.eclipse.jetty.io.SocketChannelEndPoint.flush(SocketChannelEndPoint.java:112)",
                "org.eclipse.jetty.server.internal.HttpChannelState$ChannelResponse.write(HttpChannelState.java:1430)",
                "dev.parley.server.http.Exchange$ClientStream.write(Exchange.java:389)",
                "dev.parley.server.a2a.A2aRoutes$1.send(A2aRoutes.java:452)",
                "dev.parley.server.a2a.A2aAgent.stream(A2aAgent.java:262)",
                "dev.parley.server.a2a.A2aRoutes.serve(A2aRoutes.java:461)",
                "dev.parley.server.http.Routes.run(Routes.java:217)",
                "java.base/java.lang.VirtualThread.run(VirtualThread.java:460)");
        assertFalse(ThreadDumps.calledByTheEdge(writing, STREAM));
    }

    @Test
    void aStreamCalledFromJettysHandlingIsServedOnTheEdge() {
        List<String> onTheEdge = List.of(
                "java.base/java.util.concurrent.locks.LockSupport.park(LockSupport.java:221)",
                "dev.parley.server.a2a.A2aAgent.stream(A2aAgent.java:262)",
                "dev.parley.server.a2a.A2aRoutes.stream(A2aRoutes.java:440)",
                "org.eclipse.jetty.server.Server.handle(Server.java:182)",
                "java.base/java.lang.VirtualThread.run(VirtualThread.java:460)");
        assertTrue(ThreadDumps.calledByTheEdge(onTheEdge, STREAM));
    }
}
