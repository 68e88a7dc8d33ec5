package dev.parley.server.delivery;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static dev.parley.server.it.HubFixture.assertStatus;
import static dev.parley.server.it.HubFixture.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Many publishers on one topic at once: every inbox stays gap-free and gets every publication once. */
class TopicFanoutConcurrencyTest {
    private static final int PUBLISHERS = 16;
    private static final int EVENTS_EACH = 50;
    private static final int SUBSCRIBERS = 4;

    @TempDir
    Path dir;
    private HubFixture hub;

    @BeforeEach
    void start() {
        hub = HubFixture.start(dir);
    }

    @AfterEach
    void stop() {
        hub.close();
    }

    @Test
    void concurrentPublishersLeaveGapFreeInboxesWithEveryPublicationOnce() throws Exception {
        hub.createNode("room", null);
        List<String> publishers = new ArrayList<>();
        for (int p = 0; p < PUBLISHERS; p++) {
            publishers.add(hub.createNode("pub-" + p, "room"));
        }
        for (int s = 0; s < SUBSCRIBERS; s++) {
            assertStatus(201, hub.post(hub.createNode("sub-" + s, "room"), "/v1/topics/load.test/subscriptions", null));
        }

        Set<String> publications = ConcurrentHashMap.newKeySet();
        CountDownLatch go = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> running = new ArrayList<>();
            for (int p = 0; p < PUBLISHERS; p++) {
                String token = publishers.get(p);
                int publisher = p;
                running.add(pool.submit(() -> {
                    go.await();
                    for (int n = 0; n < EVENTS_EACH; n++) {
                        var answer = assertStatus(202, hub.post(token, "/v1/topics/load.test/events",
                                obj("data", Map.of("publisher", publisher, "n", n))));
                        assertEquals(SUBSCRIBERS, answer.num("delivered"));
                        publications.add(answer.text("id"));
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : running) {
                f.get();
            }
        }
        assertEquals(PUBLISHERS * EVENTS_EACH, publications.size());

        for (int s = 0; s < SUBSCRIBERS; s++) {
            List<JsonNode> inbox = hub.inboxAll(hub.admin(), "/v1/nodes/sub-" + s + "/inbox");
            assertEquals(PUBLISHERS * EVENTS_EACH, inbox.size());
            Map<String, Integer> seen = new HashMap<>();
            for (int i = 0; i < inbox.size(); i++) {
                JsonNode envelope = inbox.get(i);
                assertEquals(i + 1, envelope.get("seq").asLong(), "seqs of sub-" + s + " are gap-free");
                assertEquals("load.test", envelope.get("topic").asText());
                seen.merge(envelope.get("corrId").asText(), 1, Integer::sum);
            }
            assertEquals(publications, seen.keySet());
            assertEquals(Set.of(1), Set.copyOf(seen.values()), "every publication exactly once");
        }
        assertEquals(PUBLISHERS * EVENTS_EACH, hub.metric("parley_topic_events_total"));
    }
}
