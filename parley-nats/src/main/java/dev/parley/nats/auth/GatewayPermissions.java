package dev.parley.nats.auth;

import java.util.ArrayList;
import java.util.List;

/**
 * What one gateway's NATS user may publish and subscribe to: exactly the subjects the gateway
 * ({@code Gateway}, {@code Relay}, {@code Ingest}) uses, as an allow-list, so everything else
 * (another gateway's outbox, deleting or purging a stream, deleting a message, reading a stream
 * message by sequence, another gateway's consumers) is refused by nats-server itself.
 *
 * <p>NATS wildcards match whole tokens only, so a stream is either named exactly
 * ({@code PARLEY_OUT_a}) or matched by {@code *}. Where {@code *} stands for the stream, the
 * consumer token is pinned to the gateway's own id: a gateway reaches only consumers named after
 * itself. Consumers on outboxes are created only through the nats-server 2.9 subject that carries
 * the filter ({@code $JS.API.CONSUMER.CREATE.<stream>.<name>.<filter>}; the server refuses a body
 * whose filter differs), pinned to {@code parley.out.*.<gw>}: a gateway reads only what is routed
 * to it. The legacy {@code CONSUMER.DURABLE.CREATE} subject carries no filter and is not allowed.
 *
 * <p>Replies (JetStream API answers, pulled messages, KV watch deliveries) come to the gateway's
 * own inbox prefix, which no other gateway may subscribe to; connect with
 * {@link #inboxPrefix(GatewayId)}.
 */
public record GatewayPermissions(List<String> publish, List<String> subscribe) {
    public static final String OUTBOX_SUBJECT_PREFIX = "parley.out.";
    public static final String OUTBOX_STREAM_PREFIX = "PARLEY_OUT_";

    public GatewayPermissions {
        publish = List.copyOf(publish);
        subscribe = List.copyOf(subscribe);
    }

    public static GatewayPermissions of(GatewayId gateway, StateRoomBuckets buckets) {
        String gw = gateway.value();
        List<String> publish = new ArrayList<>(List.of(
                OUTBOX_SUBJECT_PREFIX + gw + ".>",
                "$JS.API.STREAM.NAMES",
                "$JS.API.STREAM.INFO.*",
                "$JS.API.STREAM.CREATE." + outboxStream(gateway),
                "$JS.API.STREAM.UPDATE." + outboxStream(gateway),
                "$JS.API.CONSUMER.CREATE.*." + gw + "." + OUTBOX_SUBJECT_PREFIX + "*." + gw,
                // Ingest deletes and re-creates its durable at every (re)start to resume right after its cursor.
                "$JS.API.CONSUMER.DELETE.*." + gw,
                "$JS.API.CONSUMER.MSG.NEXT.*." + gw,
                "$JS.ACK.*." + gw + ".>"));
        publish.addAll(watchedBucket(buckets.state()));
        // KV create reads a taken key back (direct get of its last value) to tell it from a deleted one.
        publish.add("$JS.API.DIRECT.GET." + kvStream(buckets.state()) + ".>");
        publish.add("$KV." + buckets.state() + ".>");
        publish.addAll(watchedBucket(buckets.presence()));
        publish.add("$KV." + buckets.presence() + "." + gw);
        return new GatewayPermissions(publish, List.of(inboxPrefix(gateway) + ".>"));
    }

    /** A KV bucket the gateway creates (idempotent) and watches (an ordered push consumer with flow control); never updates, deletes or purges. */
    private static List<String> watchedBucket(String name) {
        String stream = kvStream(name);
        return List.of(
                "$JS.API.STREAM.CREATE." + stream,
                "$JS.API.CONSUMER.CREATE." + stream + ".>",
                "$JS.API.CONSUMER.INFO." + stream + ".*",
                "$JS.FC." + stream + ".>");
    }

    private static String kvStream(String bucket) {
        return "KV_" + bucket;
    }

    public static String outboxStream(GatewayId gateway) {
        return OUTBOX_STREAM_PREFIX + gateway.value();
    }

    /** The inbox prefix a gateway's connection must use ({@code Options.Builder.inboxPrefix}). */
    public static String inboxPrefix(GatewayId gateway) {
        return "_INBOX_" + gateway.value();
    }
}
