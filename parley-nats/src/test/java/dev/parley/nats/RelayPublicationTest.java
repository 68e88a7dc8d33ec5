package dev.parley.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
        assertEquals(List.of("steps:1-6", "e2", "steps:4-4", "e5"),
                plan.stream().map(Relay.Publication::dedupeId).toList());
        Wire.Record.Steps steps = (Wire.Record.Steps) Wire.record(plan.getFirst().body());
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
}
