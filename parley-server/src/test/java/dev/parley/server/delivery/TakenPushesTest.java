package dev.parley.server.delivery;

import dev.parley.core.NodeId;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TakenPushesTest {
    private static final NodeId A = new NodeId("a");
    private static final NodeId B = new NodeId("b");
    private static final NodeId C = new NodeId("c");

    @Test
    void aNodeTakesUpToItsCountAndItsCharacters() {
        TakenPushes taken = new TakenPushes(100, 1_000);
        assertTrue(taken.take(A, 40, 3));
        assertTrue(taken.take(A, 40, 3));
        assertFalse(taken.take(A, 40, 3), "120 characters pass the node's 100");
        assertTrue(taken.take(A, 20, 3));
        assertFalse(taken.take(A, 0, 3), "three taken: its count");
        taken.release(A, 40);
        assertTrue(taken.take(A, 40, 3), "a release makes room again");
    }

    @Test
    void aNodeWithNoneTakenMayAlwaysTakeOne() {
        TakenPushes taken = new TakenPushes(100, 150);
        assertTrue(taken.take(A, 500, 3), "heavier than its bound, but alone");
        assertFalse(taken.take(A, 1, 3));
        assertTrue(taken.take(B, 10, 3), "the weight in all is past its bound, but B has none");
        assertFalse(taken.take(B, 10, 3), "B's second would add to the weight in all");
        taken.release(A, 500);
        assertTrue(taken.take(B, 10, 3));
    }

    @Test
    void aStoreReadIsWorthItOnlyWhileAtMostHalfIsTaken() {
        TakenPushes taken = new TakenPushes(100, 300);
        assertTrue(taken.halfFree(A, 4), "nothing taken yet");
        taken.take(A, 10, 4);
        taken.take(A, 10, 4);
        assertTrue(taken.halfFree(A, 4), "two of four");
        taken.take(A, 10, 4);
        assertFalse(taken.halfFree(A, 4), "three of four");
        taken.release(A, 10);
        taken.take(A, 40, 4);
        assertFalse(taken.halfFree(A, 4), "60 of its 100 characters");
        assertTrue(taken.take(C, 100, 4));
        assertTrue(taken.take(B, 10, 4));
        assertTrue(taken.take(B, 10, 4));
        assertFalse(taken.halfFree(B, 4), "180 of 300 in all, though B holds two of four and 20 of 100");
        assertTrue(new TakenPushes(100, 300).halfFree(B, 4));
        taken.release(A, 10);
        taken.release(A, 40);
        taken.release(A, 10);
        assertTrue(taken.halfFree(A, 4), "none taken");
    }
}
