package dev.parley.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.parley.core.Envelope;
import dev.parley.core.NodeId;
import dev.parley.core.Outgoing;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.nats.testing.NatsServer;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The relay's publications keep their order in the outbox stream when one of a batch in
 * flight is lost, on a real nats-server: the interleaving NatsClusterTest met once when it
 * killed the stream's leader (an envelope of a sender stored after the sender's next one).
 * Here the loss is made exactly: the relay's options for each publication, the second one
 * never sent.
 */
class RelayOrderTest {
    private static final String STREAM = "PARLEY_OUT_t";

    @TempDir
    Path tmp;

    private static Outgoing.Mail mail(long pos) {
        return new Outgoing.Mail(pos, "u", new Envelope("e" + pos, 0, NodeId.of("lead"), NodeId.of("worker"), "message",
                Optional.of("m" + pos), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Map.of(), Instant.parse("2026-11-24T12:00:00Z"), new Trace(1, Route.INTRA_GROUP, "p")));
    }

    private static PublishAck publish(JetStream js, Relay.Publication p, Optional<Relay.Publication> previous)
            throws Exception {
        return js.publish(NatsMessage.builder().subject("parley.out.t.u").headers(new Headers()
                .add("Nats-Msg-Id", p.dedupeId())).data(p.body()).build(), Relay.options(STREAM, previous));
    }

    @Test
    void aPublicationWhosePredecessorWasLostIsRefusedAndTheBatchGoesAgainInOrder() throws Exception {
        assumeTrue(NatsServer.installed(), "nats-server is not installed (apt-get install nats-server): skipped");
        try (NatsServer nats = NatsServer.startJetStream(tmp.resolve("nats"));
             Connection connection = Nats.connect(nats.url())) {
            connection.jetStreamManagement().addStream(StreamConfiguration.builder().name(STREAM)
                    .subjects("parley.out.t.>").storageType(StorageType.File).duplicateWindow(Duration.ofMinutes(2))
                    .build());
            JetStream js = connection.jetStream();
            List<Relay.Publication> batch = Relay.Publication.plan(List.of(mail(1), mail(2), mail(3)));

            publish(js, batch.get(0), Optional.empty());
            // batch.get(1) is lost on its way; batch.get(2), in flight behind it, arrives
            JetStreamApiException refused = assertThrows(JetStreamApiException.class,
                    () -> publish(js, batch.get(2), Optional.of(batch.get(1))));
            assertTrue(refused.getMessage().contains("wrong last msg ID"), refused.getMessage());

            // the next round starts at the first one not acknowledged; the first of a round has no precondition
            publish(js, batch.get(1), Optional.empty());
            publish(js, batch.get(2), Optional.of(batch.get(1)));
            // a publication stored whose acknowledgement was lost is a duplicate, whatever came after it
            PublishAck again = publish(js, batch.get(1), Optional.of(batch.get(0)));
            assertTrue(again.isDuplicate(), again.toString());

            List<String> stored = new ArrayList<>();
            for (long seq = 1; seq <= connection.jetStreamManagement().getStreamInfo(STREAM).getStreamState()
                    .getLastSequence(); seq++) {
                stored.add(connection.jetStreamManagement().getMessage(STREAM, seq).getHeaders()
                        .getFirst("Nats-Msg-Id"));
            }
            assertEquals(List.of("e1@u", "e2@u", "e3@u"), stored, "the stream holds the batch in commit order, once");
        }
    }
}
