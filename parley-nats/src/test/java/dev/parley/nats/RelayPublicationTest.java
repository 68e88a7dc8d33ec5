package dev.parley.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.parley.core.DeliveryState;
import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Outgoing;
import dev.parley.core.RemoteStep;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** How a relay batch becomes outbox messages, and how far an acknowledged prefix clears it. */
class RelayPublicationTest {
    private static final Instant AT = Instant.parse("2026-11-24T12:00:00Z");

    private static Outgoing.Mail mail(long pos, String gateway) {
        return new Outgoing.Mail(pos, gateway, new Envelope("e" + pos, 0, NodeId.of("lead"), NodeId.of("worker"),
                "message", Optional.of("hi"), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Map.of(), AT, new Trace(1, Route.INTRA_GROUP, "p1")));
    }

    private static Outgoing.Ack ack(long pos, String gateway) {
        return new Outgoing.Ack(pos, gateway, new RemoteStep("ref" + pos, DeliveryState.ACCEPTED, AT, "accepted by x"));
    }

    @Test
    void envelopesGoOneByOneAndEachGatewaysStepsTogetherWhereTheFirstStood() throws Exception {
        List<Outgoing> owed = List.of(ack(1, "a"), mail(2, "a"), ack(3, "a"), ack(4, "b"), mail(5, "b"), ack(6, "a"));
        List<Relay.Publication> plan = Relay.Publication.plan(owed);
        assertEquals(List.of(List.of(0, 2, 5), List.of(1), List.of(3), List.of(4)),
                plan.stream().map(Relay.Publication::members).toList());
        assertEquals(List.of("a", "a", "b", "b"), plan.stream().map(Relay.Publication::gateway).toList());
        assertEquals(List.of("steps:1-6", "e2@a", "steps:4-4", "e5@b"),
                plan.stream().map(Relay.Publication::dedupeId).toList());
        Wire.Record.Steps steps = (Wire.Record.Steps) Wire.record(plan.getFirst().body(), Optional.empty());
        assertEquals(List.of("ref1", "ref3", "ref6"), steps.steps().stream().map(RemoteStep::ref).toList());
        assertEquals(((Outgoing.Ack) owed.getFirst()).step(), steps.steps().getFirst());

        // what is cleared: through the last record before the first one no acknowledged message carries
        assertEquals(6, Relay.Publication.through(owed, plan));
        assertEquals(3, Relay.Publication.through(owed, plan.subList(0, 2)), "records 4 and 5 not out yet");
        assertEquals(1, Relay.Publication.through(owed, plan.subList(0, 1)), "the envelope at 2 not out yet");
        assertEquals(-1, Relay.Publication.through(owed, List.of()));
    }

    @Test
    void oneRecordCarriesAtMostABatchOfSteps() {
        List<Outgoing> owed = new ArrayList<>();
        for (int pos = 1; pos <= Relay.Publication.MAX_STEPS + 44; pos++) {
            owed.add(ack(pos, "a"));
        }
        List<Relay.Publication> plan = Relay.Publication.plan(owed);
        assertEquals(List.of(Relay.Publication.MAX_STEPS, 44), plan.stream().map(p -> p.members().size()).toList());
        assertEquals(owed.size(), Relay.Publication.through(owed, plan));
    }

    /** A failure's reason may be as large as a request body: steps are gathered up to a byte budget, a large one alone. */
    @Test
    void stepsAreGatheredUpToAByteBudgetAndALargeOneGoesAlone() throws Exception {
        String reason = "r".repeat(Relay.Publication.MAX_STEPS_BYTES / 8); // two fit in the budget, not three
        String huge = "h".repeat(256 * 1024);
        List<Outgoing> owed = new ArrayList<>();
        for (int pos = 1; pos <= 4; pos++) {
            owed.add(new Outgoing.Ack(pos, "a", new RemoteStep("ref" + pos, DeliveryState.FAILED, AT, reason)));
        }
        owed.add(new Outgoing.Ack(5, "a", new RemoteStep("ref5", DeliveryState.FAILED, AT, huge)));
        owed.add(ack(6, "a"));
        List<Relay.Publication> plan = Relay.Publication.plan(owed);
        assertEquals(List.of(List.of(0, 1), List.of(2, 3), List.of(4), List.of(5)),
                plan.stream().map(Relay.Publication::members).toList());
        for (Relay.Publication p : plan) {
            assertTrue(p.body().length <= 2 * 256 * 1024 + 4096, "within what a receiver reads: " + p.body().length);
        }
        assertEquals(6, Relay.Publication.through(owed, plan));
    }

    /** Records of one step, as gateways wrote them before steps were gathered, still read. */
    @Test
    void aRecordOfOneStepInTheEarlierFormStillReads() throws Exception {
        byte[] earlier = ("{\"type\":\"step\",\"ref\":\"e1\",\"state\":\"delivered\",\"at\":"
                + AT.toEpochMilli() + ",\"detail\":\"delivered on b\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        Wire.Record.Steps steps = (Wire.Record.Steps) Wire.record(earlier, Optional.empty());
        assertEquals(List.of(new RemoteStep("e1", DeliveryState.DELIVERED, AT, "delivered on b")), steps.steps());
    }
}
