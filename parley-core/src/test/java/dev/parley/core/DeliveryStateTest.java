package dev.parley.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static dev.parley.core.DeliveryState.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

class DeliveryStateTest {
    private static final DeliveryEvent DELIVERED_EVENT = new DeliveryEvent.Delivered("stream");
    private static final DeliveryEvent PROCESSED_EVENT = new DeliveryEvent.Processed();
    private static final DeliveryEvent FAILED_EVENT = new DeliveryEvent.Failed("boom");
    private static final DeliveryEvent REPLIED_EVENT = new DeliveryEvent.Replied("r1");
    private static final DeliveryEvent PUSH_FAILED = new DeliveryEvent.PushFailed(2, "HTTP 500", 1000);
    private static final DeliveryEvent DEAD_LETTERED_EVENT = new DeliveryEvent.DeadLettered("15 attempts failed");
    private static final DeliveryEvent SLA_MISSED = new DeliveryEvent.SlaMissed(1000);
    private static final DeliveryEvent REDRIVEN = new DeliveryEvent.Redriven("admin");
    private static final DeliveryEvent CLAIMED = new DeliveryEvent.Claimed("worker");
    private static final DeliveryEvent RELEASED = new DeliveryEvent.Released("claim taken back");

    /** The whole table: for each event, the state each state moves to; absent = refused, same = unchanged. */
    private static final Map<DeliveryEvent, Map<DeliveryState, DeliveryState>> TABLE = Map.of(
            DELIVERED_EVENT, Map.of(ACCEPTED, DELIVERED, RETRY_PENDING, DELIVERED, DELIVERED, DELIVERED,
                    PROCESSING, PROCESSING, PROCESSED, PROCESSED, REPLIED, REPLIED, FAILED, FAILED, DEAD_LETTERED, DEAD_LETTERED,
                    INCIDENT, INCIDENT),
            CLAIMED, Map.of(ACCEPTED, PROCESSING, DELIVERED, PROCESSING, RETRY_PENDING, PROCESSING,
                    INCIDENT, PROCESSING, PROCESSING, PROCESSING),
            RELEASED, Map.of(PROCESSING, DELIVERED, ACCEPTED, ACCEPTED, DELIVERED, DELIVERED,
                    RETRY_PENDING, RETRY_PENDING, INCIDENT, INCIDENT, PROCESSED, PROCESSED, REPLIED, REPLIED,
                    FAILED, FAILED, DEAD_LETTERED, DEAD_LETTERED),
            PROCESSED_EVENT, Map.of(ACCEPTED, PROCESSED, DELIVERED, PROCESSED, PROCESSING, PROCESSED, RETRY_PENDING, PROCESSED,
                    INCIDENT, PROCESSED, PROCESSED, PROCESSED, REPLIED, REPLIED),
            FAILED_EVENT, Map.of(ACCEPTED, FAILED, DELIVERED, FAILED, PROCESSING, FAILED, RETRY_PENDING, FAILED, INCIDENT, FAILED,
                    FAILED, FAILED),
            REPLIED_EVENT, Map.of(ACCEPTED, REPLIED, DELIVERED, REPLIED, PROCESSING, REPLIED, PROCESSED, REPLIED, RETRY_PENDING, REPLIED,
                    INCIDENT, REPLIED, REPLIED, REPLIED),
            PUSH_FAILED, Map.of(ACCEPTED, RETRY_PENDING, DELIVERED, RETRY_PENDING, RETRY_PENDING, RETRY_PENDING,
                    PROCESSING, PROCESSING, PROCESSED, PROCESSED, REPLIED, REPLIED, FAILED, FAILED, DEAD_LETTERED, DEAD_LETTERED,
                    INCIDENT, INCIDENT),
            DEAD_LETTERED_EVENT, Map.of(ACCEPTED, DEAD_LETTERED, DELIVERED, DEAD_LETTERED, PROCESSING, DEAD_LETTERED,
                    RETRY_PENDING, DEAD_LETTERED,
                    INCIDENT, DEAD_LETTERED, DEAD_LETTERED, DEAD_LETTERED),
            SLA_MISSED, Map.of(ACCEPTED, INCIDENT, DELIVERED, INCIDENT, PROCESSING, INCIDENT, RETRY_PENDING, INCIDENT,
                    PROCESSED, PROCESSED,
                    REPLIED, REPLIED, FAILED, FAILED, DEAD_LETTERED, DEAD_LETTERED, INCIDENT, INCIDENT),
            REDRIVEN, Map.of(DEAD_LETTERED, ACCEPTED));

    static Stream<Arguments> everyPair() {
        List<Arguments> pairs = new ArrayList<>();
        for (DeliveryEvent event : TABLE.keySet()) {
            for (DeliveryState state : DeliveryState.values()) {
                pairs.add(Arguments.of(state, event));
            }
        }
        return pairs.stream();
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("everyPair")
    void everyStateAndEventHasTheDocumentedOutcome(DeliveryState state, DeliveryEvent event) {
        DeliveryState expected = TABLE.get(event).get(state);
        Transition transition = state.on(event);
        if (expected == null) {
            Transition.Refused refused = assertInstanceOf(Transition.Refused.class, transition);
            assertEquals(state, refused.from());
        } else if (expected == state) {
            assertInstanceOf(Transition.Unchanged.class, transition);
        } else {
            assertEquals(new Transition.Moved(state, expected), transition);
        }
    }

    @Test
    void theTableCoversEveryKindOfEvent() {
        assertEquals(DeliveryEvent.class.getPermittedSubclasses().length, TABLE.size());
    }

    @Test
    void wireNamesRoundTrip() {
        for (DeliveryState state : DeliveryState.values()) {
            assertEquals(state, DeliveryState.parse(state.wire()));
        }
        assertEquals("retry_pending", RETRY_PENDING.wire());
    }
}
