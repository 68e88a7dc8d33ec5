package dev.parley.core;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static dev.parley.core.MemoryHub.ADMIN;
import static dev.parley.core.MemoryHub.as;
import static dev.parley.core.MemoryHub.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The operator's dead-letter queue: only the admin's, and every change audited under the version in force. */
class DeadLettersTest {
    private final MemoryHub hub = new MemoryHub();
    private final MemoryStore store = hub.store;
    private final Router router = new Router(hub.graph, hub.policy, PayloadSchemas.NONE, store, hub.clock, hub.ids);
    private final List<Envelope> handedToDelivery = new ArrayList<>();
    private final DeadLetters deadLetters = new DeadLetters(store, hub.rules, hub.clock, handedToDelivery::add);
    private Envelope lost;

    /** lead → a1, a2; a1's envelope to a2 was dead-lettered after 5 attempts. */
    @BeforeEach
    void oneDeadLetter() {
        hub.node("lead", null);
        hub.node("a1", "lead");
        hub.node("a2", "lead");
        lost = router.send(as("a1"), new SendRequest(NodeId.of("a2"), SendRequest.DEFAULT_KIND, text("hi"),
                Optional.empty(), Optional.empty())).envelope().withAttempt(5);
        hub.advance(Duration.ofMinutes(1));
        store.deadLetter(lost.id(), "webhook answered 500", 5, hub.clock.instant(), Optional.empty());
    }

    @Test
    void theAdminSeesTheQueueByNodeAndByEnvelope() {
        DeadLetter expected = store.deadLetter(lost.id()).orElseThrow();

        assertEquals(List.of(expected), deadLetters.list(ADMIN, Optional.empty(), 10));
        assertEquals(List.of(expected), deadLetters.list(ADMIN, Optional.of(NodeId.of("a2")), 10));
        assertEquals(List.of(), deadLetters.list(ADMIN, Optional.of(NodeId.of("a1")), 10));
        assertEquals(expected, deadLetters.show(ADMIN, lost.id()));
        assertEquals(ErrorCode.DEAD_LETTER_NOT_FOUND,
                assertThrows(ParleyException.class, () -> deadLetters.show(ADMIN, "no-such-id")).code());
    }

    @Test
    void aRedriveStartsAFreshAttemptCycleHandsItToDeliveryAndIsAudited() {
        String version = hub.nextVersion();
        Envelope again = deadLetters.redrive(ADMIN, lost.id());

        assertEquals(1, again.trace().attempt());
        assertEquals(lost.id(), again.id());
        assertEquals(List.of(again), handedToDelivery);
        assertEquals(DeliveryState.ACCEPTED, store.state(lost.id()));
        assertEquals(List.of(), deadLetters.list(ADMIN, Optional.empty(), 10));
        assertEquals(List.of(new AuditEntry(hub.clock.instant(), "admin", "dead_letter.redrive", lost.id(),
                AuditEntry.Decision.ALLOW, "dead_letter.redrive", Optional.of(lost.id()), version)),
                store.audit("dead_letter.redrive"));
    }

    @Test
    void aDropLeavesTheQueueAndIsAudited() {
        String version = hub.nextVersion();
        deadLetters.drop(ADMIN, lost.id());

        assertEquals(List.of(), deadLetters.list(ADMIN, Optional.empty(), 10));
        assertEquals(List.of(), handedToDelivery);
        assertEquals(List.of(new AuditEntry(hub.clock.instant(), "admin", "dead_letter.drop", lost.id(),
                AuditEntry.Decision.ALLOW, "dead_letter.drop", Optional.of(lost.id()), version)),
                store.audit("dead_letter.drop"));
        assertEquals(ErrorCode.DEAD_LETTER_NOT_FOUND,
                assertThrows(ParleyException.class, () -> deadLetters.drop(ADMIN, lost.id())).code());
    }

    @Test
    void whatIsNotInTheQueueCannotBeRedrivenAndNothingIsHandedOn() {
        deadLetters.drop(ADMIN, lost.id());
        int audited = store.audit().size();

        assertEquals(ErrorCode.DEAD_LETTER_NOT_FOUND,
                assertThrows(ParleyException.class, () -> deadLetters.redrive(ADMIN, lost.id())).code());
        assertEquals(List.of(), handedToDelivery);
        assertEquals(audited, store.audit().size());
    }

    @Test
    void noNodeManagesTheQueueNotEvenTheReceiver() {
        int audited = store.audit().size();
        for (Runnable call : List.<Runnable>of(
                () -> deadLetters.list(as("a2"), Optional.empty(), 10),
                () -> deadLetters.show(as("a2"), lost.id()),
                () -> deadLetters.redrive(as("a2"), lost.id()),
                () -> deadLetters.drop(as("lead"), lost.id()))) {
            ParleyException e = assertThrows(ParleyException.class, call::run);
            assertEquals(ErrorCode.FORBIDDEN, e.code());
            assertEquals("only the admin may manage dead letters", e.getMessage());
        }
        assertEquals(DeliveryState.DEAD_LETTERED, store.state(lost.id()));
        assertEquals(1, deadLetters.list(ADMIN, Optional.empty(), 10).size());
        assertEquals(audited, store.audit().size());
    }
}
