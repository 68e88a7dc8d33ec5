package dev.parley.cli.crash;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Senders on virtual threads of their own that send until stopped, whatever becomes of the hub:
 * a crash test kills it under them. Each says what one sender sends in {@link #run(int)}.
 */
abstract class SendLoops {
    /** Answers no sender expected, in the words of the sender that got them. */
    final ConcurrentLinkedQueue<String> unexpected = new ConcurrentLinkedQueue<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean stop;

    /** Starts {@code count} senders, numbered from 0. */
    final void start(int count, String name) {
        for (int i = 0; i < count; i++) {
            int sender = i;
            threads.add(Thread.ofVirtual().name(name + "-" + i).start(() -> run(sender)));
        }
    }

    /** One sender's loop: sends while {@link #running()}, {@link #pause()} after a refusal or a lost connection. */
    abstract void run(int sender);

    final boolean running() {
        return !stop;
    }

    /** Backs off a little: the hub refused a send, or is gone. */
    final void pause() {
        try {
            Thread.sleep(5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop = true;
        }
    }

    /** Stops every sender and waits for each to finish its send in flight. */
    final void stopAndJoin() throws InterruptedException {
        stop = true;
        for (Thread t : threads) {
            assertTrue(t.join(Duration.ofSeconds(20)), t.getName() + " did not stop");
        }
    }
}
