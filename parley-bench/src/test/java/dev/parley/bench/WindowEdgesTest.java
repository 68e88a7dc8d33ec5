package dev.parley.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * What runs at the measured window's start runs once more half-way through a warm-up, so that
 * whatever it makes the hub do (its first scrape of /metrics) is compiled before the window.
 */
class WindowEdgesTest {

    /** A load generator that sends nothing until it is stopped. */
    private static final class Idle implements LoadResult.Worker {
        private final CountDownLatch stopped = new CountDownLatch(1);
        private final SendLog log = new SendLog();

        @Override
        public void run() {
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void stop() {
            stopped.countDown();
        }

        @Override
        public SendLog log() {
            return log;
        }
    }

    private static List<String> edges(int warmup) throws Exception {
        List<String> edges = new ArrayList<>();
        LoadResult.measure(new LoadResult.Worker[]{new Idle()}, "idle", new InboxArrivals[0], Warmup.fixed(warmup), 1, 0,
                at -> edges.add("start"), at -> edges.add("end"));
        return edges;
    }

    @Test
    void aWarmUpRehearsesTheWindowsStartOnce() throws Exception {
        assertEquals(List.of("start", "start", "end"), edges(1));
    }

    @Test
    void withoutAWarmUpTheWindowsStartRunsOnce() throws Exception {
        assertEquals(List.of("start", "end"), edges(0));
    }
}
