package dev.parley.nats.auth;

import dev.parley.nats.testing.GatewayConnection;
import dev.parley.nats.testing.NatsServer;
import io.nats.client.ConsumerContext;
import io.nats.client.FetchConsumer;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.KeyValueOptions;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.impl.NatsKeyValueWatchSubscription;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.FetchConsumeOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.function.Executable;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Gateway users minted by {@link NatsAuthority} against a real nats-server 2.9 started from the
 * generated configuration: each does what a gateway needs without one permission violation,
 * and nats-server refuses what would let it write, wipe or read another gateway's outbox.
 */
class GatewayPermissionsTest {
    private static final GatewayId A = new GatewayId("a");
    private static final GatewayId B = new GatewayId("b");
    private static final StateRoomBuckets BUCKETS = StateRoomBuckets.DEFAULT;

    private final NatsAuthority authority = NatsAuthority.create();
    @TempDir
    Path tmp;
    private NatsServer server;
    private GatewayConnection a;
    private GatewayConnection b;

    @BeforeEach
    void start() throws Exception {
        server = NatsServer.start(tmp, authority::serverConfig);
        a = GatewayConnection.connect(server, authority.mint(A, BUCKETS));
        b = GatewayConnection.connect(server, authority.mint(B, BUCKETS));
        a.createOutbox();
        b.createOutbox();
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {a, b, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    void publishingToItsOwnOutboxIsAcknowledged() throws Exception {
        PublishAck ack = a.js().publish("parley.out.a.b", "hello".getBytes(StandardCharsets.UTF_8),
                PublishOptions.builder().messageId("env-1").build());
        PublishAck again = a.js().publish("parley.out.a.b", "hello".getBytes(StandardCharsets.UTF_8),
                PublishOptions.builder().messageId("env-1").build());

        assertEquals("PARLEY_OUT_a", ack.getStream());
        assertEquals(1, ack.getSeqno());
        assertTrue(again.isDuplicate(), "the same Nats-Msg-Id within the duplicate window is stored once");
        assertEquals(1, a.jsm().getStreamInfo("PARLEY_OUT_a").getStreamState().getMsgCount());
        a.createOutbox(); // idempotent at every start
        a.assertNoErrors();
    }

    @Test
    void publishingIntoAnotherGatewaysOutboxIsRefusedByNats() throws Exception {
        a.assertPublishRefused("parley.out.b.x");
        a.assertPublishRefused("parley.out.b.a");

        assertEquals(0, b.jsm().getStreamInfo("PARLEY_OUT_b").getStreamState().getMsgCount());
    }

    @Test
    void cannotDeletePurgeUpdateOrEraseAMessageOfAnotherOutbox() throws Exception {
        b.js().publish("parley.out.b.a", "keep".getBytes(StandardCharsets.UTF_8));

        refused(() -> a.refusedJsm().deleteStream("PARLEY_OUT_b"));
        a.awaitViolation("Publish", "$JS.API.STREAM.DELETE.PARLEY_OUT_b");
        refused(() -> a.refusedJsm().purgeStream("PARLEY_OUT_b"));
        a.awaitViolation("Publish", "$JS.API.STREAM.PURGE.PARLEY_OUT_b");
        refused(() -> a.refusedJsm().deleteMessage("PARLEY_OUT_b", 1));
        a.awaitViolation("Publish", "$JS.API.STREAM.MSG.DELETE.PARLEY_OUT_b");
        refused(() -> a.refusedJsm().updateStream(StreamConfiguration.builder().name("PARLEY_OUT_b")
                .subjects("parley.out.b.>").storageType(StorageType.File).maxMessages(1).build()));
        a.awaitViolation("Publish", "$JS.API.STREAM.UPDATE.PARLEY_OUT_b");
        // nor its own stream: an outbox is append-only for its writer too
        refused(() -> a.refusedJsm().deleteStream("PARLEY_OUT_a"));
        a.awaitViolation("Publish", "$JS.API.STREAM.DELETE.PARLEY_OUT_a");

        assertEquals(1, b.jsm().getStreamInfo("PARLEY_OUT_b").getStreamState().getMsgCount());
    }

    /** The stream's subjects are in the request body, out of reach of subject permissions: the server's overlap check holds once b's outbox exists. */
    @Test
    void cannotWidenItsOwnOutboxOverAnExistingOne() throws Exception {
        assertThrows(JetStreamApiException.class, () -> a.jsm().updateStream(StreamConfiguration.builder()
                .name("PARLEY_OUT_a").subjects("parley.out.a.>", "parley.out.b.>").storageType(StorageType.File).build()));

        assertEquals(List.of("parley.out.a.>"), a.jsm().getStreamInfo("PARLEY_OUT_a").getConfiguration().getSubjects());
    }

    /** As ingest does it: the durable made through the stream (no consumer info needed), pulled, acked with confirmation, and made afresh after the cursor. */
    @Test
    void readsWhatIsRoutedToItWithItsOwnDurableAcksAndRemakesIt() throws Exception {
        b.js().publish("parley.out.b.a", "for a".getBytes(StandardCharsets.UTF_8));
        b.js().publish("parley.out.b.c", "for c".getBytes(StandardCharsets.UTF_8));
        ConsumerConfiguration.Builder durable = ConsumerConfiguration.builder().durable("a")
                .filterSubject("parley.out.b.a").ackPolicy(AckPolicy.Explicit);

        ConsumerContext consumer = a.nats.getStreamContext("PARLEY_OUT_b").createOrUpdateConsumer(durable.build());
        Message message;
        try (FetchConsumer fetch = consumer.fetch(FetchConsumeOptions.builder().maxMessages(1).expiresIn(10_000).build())) {
            message = fetch.nextMessage();
        }
        assertEquals("for a", new String(message.getData(), StandardCharsets.UTF_8));
        message.ackSync(Duration.ofSeconds(10));

        // At every restart ingest makes its durable afresh, right after its cursor.
        assertTrue(a.jsm().deleteConsumer("PARLEY_OUT_b", "a"));
        ConsumerInfo remade = a.jsm().addOrUpdateConsumer("PARLEY_OUT_b",
                durable.deliverPolicy(DeliverPolicy.ByStartSequence).startSequence(2).build());
        assertEquals(0, remade.getNumPending(), "nothing else in b's outbox is routed to a");
        assertEquals(0, remade.getNumAckPending());
        a.assertNoErrors();
    }

    @Test
    void cannotReadWhatIsRoutedToOthersNorTouchTheirConsumers() throws Exception {
        b.js().publish("parley.out.b.c", "for c".getBytes(StandardCharsets.UTF_8));
        b.jsm().addOrUpdateConsumer("PARLEY_OUT_a", ConsumerConfiguration.builder().durable("b")
                .filterSubject("parley.out.a.b").ackPolicy(AckPolicy.Explicit).build());

        refused(() -> a.refusedJsm().addOrUpdateConsumer("PARLEY_OUT_b", ConsumerConfiguration.builder()
                .durable("a").filterSubject("parley.out.b.c").ackPolicy(AckPolicy.Explicit).build()));
        a.awaitViolation("Publish", "$JS.API.CONSUMER.CREATE.PARLEY_OUT_b.a.parley.out.b.c");
        refused(() -> a.refusedJsm().addOrUpdateConsumer("PARLEY_OUT_b", ConsumerConfiguration.builder()
                .durable("a").ackPolicy(AckPolicy.Explicit).build()));
        a.awaitViolation("Publish", "$JS.API.CONSUMER.CREATE.PARLEY_OUT_b.a");
        refused(() -> a.refusedJsm().addOrUpdateConsumer("PARLEY_OUT_b", ConsumerConfiguration.builder()
                .durable("c").filterSubject("parley.out.b.c").ackPolicy(AckPolicy.Explicit).build()));
        a.awaitViolation("Publish", "$JS.API.CONSUMER.CREATE.PARLEY_OUT_b.c.parley.out.b.c");
        refused(() -> a.refusedJsm().getMessage("PARLEY_OUT_b", 1));
        a.awaitViolation("Publish", "$JS.API.STREAM.MSG.GET.PARLEY_OUT_b");
        refused(() -> a.refusedJsm().deleteConsumer("PARLEY_OUT_a", "b"));
        a.awaitViolation("Publish", "$JS.API.CONSUMER.DELETE.PARLEY_OUT_a.b");
        a.nats.subscribe("parley.out.>");
        a.awaitViolation("Subscription", "parley.out.>");
        a.nats.subscribe("_INBOX_b.>");
        a.awaitViolation("Subscription", "_INBOX_b.>");

        // b's durable is as b made it: making it again with the same settings is accepted as a no-op.
        assertEquals("parley.out.a.b", b.jsm().addOrUpdateConsumer("PARLEY_OUT_a", ConsumerConfiguration.builder().durable("b")
                .filterSubject("parley.out.a.b").ackPolicy(AckPolicy.Explicit).build()).getConsumerConfiguration().getFilterSubject());
        assertEquals(1, b.jsm().getStreamInfo("PARLEY_OUT_a").getStreamState().getConsumerCount());
        assertEquals(0, b.jsm().getStreamInfo("PARLEY_OUT_b").getStreamState().getConsumerCount());
    }

    @Test
    void bothUseTheStateRoomPutGetWatchAndCompareAndSet() throws Exception {
        KeyValueConfiguration state = KeyValueConfiguration.builder().name(BUCKETS.state()).storageType(StorageType.File).build();
        a.nats.keyValueManagement().create(state);
        b.nats.keyValueManagement().create(state); // every gateway creates it at start; idempotent
        KeyValue aState = a.nats.keyValue(BUCKETS.state());
        KeyValue bState = b.nats.keyValue(BUCKETS.state());
        List<KeyValueEntry> seenByB = new CopyOnWriteArrayList<>();
        NatsKeyValueWatchSubscription watch = bState.watchAll(new KeyValueWatcher() {
            @Override
            public void watch(KeyValueEntry entry) {
                seenByB.add(entry);
            }

            @Override
            public void endOfData() {
            }
        });

        long revision = aState.create("node.alice", "{\"owner\":\"a\"}".getBytes(StandardCharsets.UTF_8));
        JetStreamApiException taken = assertThrows(JetStreamApiException.class,
                () -> bState.create("node.alice", "{\"owner\":\"b\"}".getBytes(StandardCharsets.UTF_8)),
                "a node id is claimed once: jnats reads the key back (direct get) to tell taken from deleted");
        assertEquals(10071, taken.getApiErrorCode());
        assertEquals("{\"owner\":\"a\"}", bState.get("node.alice").getValueAsString());
        await().atMost(Duration.ofSeconds(10)).until(() -> seenByB.stream().anyMatch(e -> e.getKey().equals("node.alice")));
        bState.update("node.alice", "{\"owner\":\"b\"}".getBytes(StandardCharsets.UTF_8), revision);
        assertThrows(JetStreamApiException.class,
                () -> aState.update("node.alice", "{\"owner\":\"a\"}".getBytes(StandardCharsets.UTF_8), revision),
                "compare-and-set: a stale revision loses");
        watch.unsubscribe();

        a.assertNoErrors();
        b.assertNoErrors();
    }

    @Test
    void eachWritesOnlyItsOwnPresence() throws Exception {
        KeyValueConfiguration presence = KeyValueConfiguration.builder().name(BUCKETS.presence())
                .storageType(StorageType.File).ttl(Duration.ofSeconds(30)).build();
        a.nats.keyValueManagement().create(presence);
        b.nats.keyValueManagement().create(presence);
        KeyValue aPresence = a.nats.keyValue(BUCKETS.presence());
        b.nats.keyValue(BUCKETS.presence()).put("b", "{\"version\":\"1\"}");

        aPresence.put("a", "{\"version\":\"1\"}");
        KeyValue refusedPresence = a.nats.keyValue(BUCKETS.presence(),
                KeyValueOptions.builder().jetStreamOptions(GatewayConnection.REFUSED).build());
        refused(() -> refusedPresence.put("b", "{\"forged\":true}"));
        a.awaitViolation("Publish", "$KV." + BUCKETS.presence() + ".b");

        // A gateway never reads a presence key, it watches the bucket: history is a watch of one key.
        assertEquals(List.of("{\"version\":\"1\"}"), aPresence.history("b").stream().map(KeyValueEntry::getValueAsString).toList());
        assertEquals(List.of("{\"version\":\"1\"}"), aPresence.history("a").stream().map(KeyValueEntry::getValueAsString).toList());
    }

    private static void refused(Executable call) {
        Throwable thrown = assertThrows(Throwable.class, call);
        assertTrue(thrown instanceof java.io.IOException || thrown instanceof JetStreamApiException,
                () -> "a refused request fails as I/O (no answer) or an API error, not " + thrown);
    }
}
