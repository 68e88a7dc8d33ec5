package dev.parley.server.federation;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.server.it.HubFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Several senders on gateway a sending {@code "<sender>:<n>"} to one node on gateway b: the
 * nodes for it, and what the target's inbox must look like once everything arrived.
 */
final class SenderLoad {
    private SenderLoad() {
    }

    /** The tokens of the load's nodes: {@code lead} and {@code sender0..} on a, {@code worker} (lead's child) on b. */
    record Parties(String lead, List<String> senders, String worker) {
    }

    /**
     * Creates the nodes, waits until each gateway sees the other's, and sends one probe from
     * lead that arrives first in worker's inbox, so that b takes in from a before the load.
     */
    static Parties place(HubFixture a, HubFixture b, int senders, Duration wait) {
        String lead = a.createNode("lead", null);
        List<String> tokens = new ArrayList<>();
        for (int s = 0; s < senders; s++) {
            tokens.add(a.createNode("sender" + s, "lead"));
        }
        await().atMost(wait).until(() -> b.get(b.admin(), "/v1/nodes/sender" + (senders - 1)).status() == 200);
        String worker = b.createNodeResp(b.admin(), "worker", "lead").text("token");
        await().atMost(wait).until(() -> a.get(a.admin(), "/v1/nodes/worker").status() == 200);
        assertEquals(202, a.send(lead, "worker", "probe").status());
        await().atMost(wait).until(() -> b.inbox(worker).size() == 1);
        return new Parties(lead, tokens, worker);
    }

    /**
     * The inbox from index {@code from} on holds exactly the {@code accepted} envelope ids, once
     * each, with gap-free seqs, each sender's envelopes in the order it sent them.
     */
    static void assertExactlyOnceInOrder(List<JsonNode> inbox, int from, int senders, Collection<String> accepted) {
        assertEquals(from + accepted.size(), inbox.size(), "every 202 delivered exactly once");
        Set<String> ids = new HashSet<>();
        int[] next = new int[senders];
        for (int i = from; i < inbox.size(); i++) {
            JsonNode e = inbox.get(i);
            assertEquals(i + 1, e.get("seq").asLong(), "seqs gap-free");
            assertTrue(ids.add(e.get("id").asText()), "twice: " + e);
            String[] text = e.get("text").asText().split(":");
            int sender = Integer.parseInt(text[0]);
            assertEquals(next[sender]++, Integer.parseInt(text[1]), "order per sender kept");
        }
        assertEquals(new HashSet<>(accepted), ids);
        assertTrue(!ids.isEmpty(), "nothing was sent");
    }
}
