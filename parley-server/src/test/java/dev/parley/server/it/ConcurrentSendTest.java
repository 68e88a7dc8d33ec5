package dev.parley.server.it;

import static dev.parley.server.it.HubFixture.obj;
import static dev.parley.server.it.HubFixture.uid;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture.Resp;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Many concurrent senders: per-inbox seqs stay gap-free and every accepted id lands exactly once. */
class ConcurrentSendTest {
    static final int THREADS = 32;
    static final int PER_THREAD = 50;
    static final int TARGETS = 4;

    @TempDir
    static Path dataDir;
    static HubFixture hub;

    @BeforeAll
    static void startHub() {
        hub = HubFixture.start(dataDir);
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
        }
    }

    record Accepted(String to, String id, long seq) {
    }

    @Test
    void thirtyTwoVirtualThreadsSendingFiftyEach() throws Exception {
        String root = uid("cc-root");
        hub.createNode(root, null);
        String[] senders = new String[THREADS];
        for (int t = 0; t < THREADS; t++) {
            senders[t] = hub.createNode(uid("cc-s"), root);
        }
        String[] targets = new String[TARGETS];
        Map<String, String> targetTokens = new HashMap<>();
        for (int k = 0; k < TARGETS; k++) {
            targets[k] = uid("cc-t");
            targetTokens.put(targets[k], hub.createNode(targets[k], root));
        }

        List<Accepted> accepted = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    go.await();
                    for (int j = 0; j < PER_THREAD; j++) {
                        String to = targets[(thread + j) % TARGETS];
                        Resp r = hub.sendOk(senders[thread], to, "t" + thread + "-m" + j);
                        assertEquals(to, r.text("to"));
                        accepted.add(new Accepted(to, r.text("id"), r.num("seq")));
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
        }
        assertEquals(THREADS * PER_THREAD, accepted.size());
        assertEquals(THREADS * PER_THREAD, accepted.stream().map(Accepted::id).distinct().count(),
                "every 202 must carry a distinct id");

        int total = 0;
        for (String target : targets) {
            List<Accepted> mine = accepted.stream().filter(a -> a.to().equals(target)).toList();
            List<JsonNode> inbox = hub.inbox(targetTokens.get(target));
            assertEquals(mine.size(), inbox.size(), "inbox " + target + " has the wrong number of envelopes");
            Map<String, Long> seqById = new HashMap<>();
            for (int i = 0; i < inbox.size(); i++) {
                JsonNode e = inbox.get(i);
                assertEquals(i + 1, e.get("seq").asLong(), "inbox " + target + " seqs must be 1..N gap-free");
                Long before = seqById.put(e.get("id").asText(), e.get("seq").asLong());
                assertTrue(before == null, "id twice in inbox " + target + ": " + e.get("id"));
            }
            Set<String> acceptedIds = new HashSet<>();
            for (Accepted a : mine) {
                acceptedIds.add(a.id());
                assertEquals(a.seq(), seqById.get(a.id()), "202 seq differs from the stored seq for " + a.id());
            }
            assertEquals(acceptedIds, seqById.keySet(), "inbox " + target + " ids differ from the accepted ids");
            total += inbox.size();
        }
        assertEquals(THREADS * PER_THREAD, total);
    }

    @Test
    void racingDuplicatesOfOneMessageIdMakeOneEnvelope() throws Exception {
        String root = uid("dup-root");
        hub.createNode(root, null);
        String sender = uid("dup-s");
        String senderToken = hub.createNode(sender, root);
        String target = uid("dup-t");
        String targetToken = hub.createNode(target, root);

        for (int round = 0; round < 5; round++) {
            String mid = "race-" + round;
            Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
            Set<String> ids = ConcurrentHashMap.newKeySet();
            CountDownLatch go = new CountDownLatch(1);
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    futures.add(pool.submit(() -> {
                        go.await();
                        Resp r = hub.post(senderToken, "/v1/messages",
                                obj("to", target, "text", "race", "messageId", mid));
                        statuses.merge(r.status(), 1, Integer::sum);
                        ids.add(r.text("id"));
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> f : futures) {
                    f.get(30, TimeUnit.SECONDS);
                }
            }
            assertEquals(Map.of(202, 1, 200, 7), statuses, "one 202 and seven duplicates expected");
            assertEquals(1, ids.size(), "all answers must name the same envelope: " + ids);
        }
        assertEquals(5, hub.inbox(targetToken).size(), "one envelope per messageId");
    }
}
