package dev.parley.server.delivery;

import dev.parley.core.Envelope;
import dev.parley.core.JsonText;
import dev.parley.core.NodeId;
import dev.parley.core.Route;
import dev.parley.core.Trace;
import dev.parley.core.TraceContext;
import dev.parley.server.wire.Json;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The frames are an API contract (API.md, "Each envelope"): these bytes are the ones the hub
 * wrote while it encoded every envelope on its own, with every optional field set and with none.
 */
class EnvelopeFramesTest {
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final Envelope FULL = new Envelope("0190a4b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b", 7, NodeId.of("lead"),
            NodeId.of("worker-1"), "note.v1", Optional.of("line one\nline \"two\" / \\ \u007f <\u2028> \u00e9\u2603 \ud83d\ude00 \t\u0001"),
            Optional.of(new JsonText("{\"n\":2,\"s\":[1,\"x\"]}")), Optional.of("corr-1"), Optional.of("thread-9"),
            Optional.of("builds"), Optional.of("key-1"), Map.of("k", "v"), Instant.parse("2026-11-28T07:44:25.123Z"),
            new Trace(2, Route.POLICY, "v3", Optional.of("allow-builds"),
                    new TraceContext(TRACE_ID, "00f067aa0ba902b7", Optional.of("b7ad6b7169203331"))));
    private static final Envelope BARE = new Envelope("0190a4b2-7c1d-7e3f-8a9b-0c1d2e3f4a5c", 8, NodeId.of("lead"),
            NodeId.of("worker-1"), "message", Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.empty(), Map.of(), Instant.parse("2026-01-02T03:04:05.006Z"),
            new Trace(1, Route.INTRA_GROUP, "v1", Optional.empty(), new TraceContext(TRACE_ID, "00f067aa0ba902b8",
                    Optional.empty())));
    private static final String FULL_JSON = "{\"id\":\"0190a4b2-7c1d-7e3f-8a9b-0c1d2e3f4a5b\",\"seq\":7,\"from\":\"lead\","
            + "\"to\":\"worker-1\",\"kind\":\"note.v1\",\"text\":\"line one\\nline \\\"two\\\" / \\\\ \u007f <\u2028> \u00e9\u2603 \\uD83D\\uDE00 "
            + "\\t\\u0001\",\"data\":{\"n\":2,\"s\":[1,\"x\"]},\"corrId\":\"corr-1\",\"threadId\":\"thread-9\","
            + "\"topic\":\"builds\",\"meta\":{\"k\":\"v\"},\"createdAt\":\"2026-11-28T07:44:25.123Z\",\"trace\":{\"attempt\":2,"
            + "\"route\":\"policy\",\"policyVersion\":\"v3\",\"rule\":\"allow-builds\",\"traceId\":\"" + TRACE_ID + "\","
            + "\"traceparent\":\"00-" + TRACE_ID + "-00f067aa0ba902b7-01\"}}";
    private static final String BARE_JSON = "{\"id\":\"0190a4b2-7c1d-7e3f-8a9b-0c1d2e3f4a5c\",\"seq\":8,\"from\":\"lead\","
            + "\"to\":\"worker-1\",\"kind\":\"message\",\"text\":null,\"data\":null,\"corrId\":null,\"threadId\":null,"
            + "\"meta\":{},\"createdAt\":\"2026-01-02T03:04:05.006Z\",\"trace\":{\"attempt\":1,\"route\":\"intra_group\","
            + "\"policyVersion\":\"v1\",\"traceId\":\"" + TRACE_ID + "\",\"traceparent\":\"00-" + TRACE_ID
            + "-00f067aa0ba902b8-01\"}}";

    @Test
    void eachEnvelopeIsOneFrameWithItsSeqKindAndJsonAndNothingBetweenFrames() {
        assertEquals("id: 7\nevent: note.v1\ndata: " + FULL_JSON + "\n\nid: 8\nevent: message\ndata: " + BARE_JSON + "\n\n",
                frames(List.of(FULL, BARE), true));
    }

    @Test
    void framesWithoutIdsLeaveTheReadersCursorAlone() {
        assertEquals("event: message\ndata: " + BARE_JSON + "\n\nevent: note.v1\ndata: " + FULL_JSON + "\n\n",
                frames(List.of(BARE, FULL), false));
    }

    @Test
    void aFrameCarriesTheSameJsonAsTheEnvelopeAlone() {
        assertEquals(FULL_JSON, new String(Json.envelope(FULL), StandardCharsets.UTF_8));
        assertEquals(BARE_JSON, new String(Json.envelope(BARE), StandardCharsets.UTF_8));
    }

    @Test
    void framesFollowWhatTheBufferAlreadyHolds() {
        ByteArrayOutputStream buffer = EnvelopeFrames.buffer(List.of(BARE), 16);
        buffer.writeBytes(": dropped 3\n\n".getBytes(StandardCharsets.UTF_8));
        EnvelopeFrames.write(buffer, List.of(BARE), false);
        assertEquals(": dropped 3\n\nevent: message\ndata: " + BARE_JSON + "\n\n", buffer.toString(StandardCharsets.UTF_8));
    }

    private static String frames(List<Envelope> envelopes, boolean ids) {
        ByteArrayOutputStream buffer = EnvelopeFrames.buffer(envelopes, 0);
        EnvelopeFrames.write(buffer, envelopes, ids);
        return buffer.toString(StandardCharsets.UTF_8);
    }
}
