package dev.parley.server.delivery;

import dev.parley.core.NodeId;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The webhook pushes taken up, running or waiting for a permit, each holding its envelope in
 * memory: counted per node, and weighed in characters of text and data per node and in all.
 * A count alone would let a slow endpoint sent large envelopes hold its bound times the body
 * limit, and many such nodes the hub's heap. A node with none taken may always take one, so a
 * node is never starved by the others' weight, and an envelope heavier than a node's bound
 * still goes, alone.
 */
final class TakenPushes {
    private final long charsPerNode;
    private final long charsInAll;
    private final Map<NodeId, Taken> byNode = new ConcurrentHashMap<>();
    private final AtomicLong chars = new AtomicLong();

    private record Taken(AtomicInteger count, AtomicLong chars) {
    }

    TakenPushes(long charsPerNode, long charsInAll) {
        this.charsPerNode = charsPerNode;
        this.charsInAll = charsInAll;
    }

    /**
     * Takes up a push of {@code weight} characters for {@code node} if it has fewer than
     * {@code countAtMost} and the weight fits. Counted first and given back when it does not
     * fit (no lock on the path of every push): two takers at once may both be refused where one
     * would have fitted, which leaves a push in the schedule a little longer, never past a bound.
     */
    boolean take(NodeId node, long weight, int countAtMost) {
        Taken taken = byNode.computeIfAbsent(node, n -> new Taken(new AtomicInteger(), new AtomicLong()));
        int count = taken.count().incrementAndGet();
        long nodeChars = taken.chars().addAndGet(weight);
        long allChars = chars.addAndGet(weight);
        if (count > countAtMost || count > 1 && (nodeChars > charsPerNode || allChars > charsInAll)) {
            give(taken, weight);
            return false;
        }
        return true;
    }

    /** A push taken up with {@code weight} has finished or was not started. */
    void release(NodeId node, long weight) {
        give(byNode.get(node), weight);
    }

    private void give(Taken taken, long weight) {
        chars.addAndGet(-weight);
        taken.chars().addAndGet(-weight);
        taken.count().decrementAndGet();
    }

    /**
     * Whether at most half of what {@code node} may take up is taken (by count against
     * {@code countBound}, and by weight, its own and in all), or nothing: worth a store read
     * for its next pushes, which would otherwise mostly find no room.
     */
    boolean halfFree(NodeId node, int countBound) {
        Taken taken = byNode.get(node);
        if (taken == null || taken.count().get() == 0) {
            return true;
        }
        return chars.get() <= charsInAll / 2 && taken.count().get() <= countBound / 2
                && taken.chars().get() <= charsPerNode / 2;
    }
}
