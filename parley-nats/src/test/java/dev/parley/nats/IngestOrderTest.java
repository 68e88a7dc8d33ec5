package dev.parley.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which records of a batch may be taken: those delivered in order right after the last taken. */
class IngestOrderTest {
    @Test
    void aGapInTheConsumersDeliveriesStopsTheBatchThere() {
        assertEquals(3, Ingest.inOrder(List.of(1L, 2L, 3L), 0), "a consumer made afresh numbers from 1");
        assertEquals(0, Ingest.inOrder(List.of(2L, 3L), 0), "its first delivery never arrived");
        assertEquals(2, Ingest.inOrder(List.of(5L, 6L, 8L, 9L), 4), "7 was delivered and lost: 8 and 9 must wait");
        assertEquals(0, Ingest.inOrder(List.of(4L), 4), "a redelivery of what was taken");
        assertEquals(0, Ingest.inOrder(List.of(), 7));
    }
}
