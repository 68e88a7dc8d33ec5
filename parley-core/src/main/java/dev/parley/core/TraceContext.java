package dev.parley.core;

import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * Where an envelope sits in a distributed trace (W3C Trace Context): the trace of its
 * conversation, its own span, and the span it follows (the caller's, or the envelope it
 * answers). A caller's {@code traceparent} is given to the hub by the edge it came through
 * ({@link #enter}); the envelopes the call makes continue that trace, replies and task moves
 * continue their conversation's, and anything else starts a trace of its own.
 */
public record TraceContext(String traceId, String spanId, Optional<String> parentSpanId) {
    /**
     * The environment variable that hands a process the span it runs under (OpenTelemetry's
     * environment carrier for {@code traceparent}): what it sends to the hub continues it.
     */
    public static final String VARIABLE = "TRACEPARENT";
    private static final Pattern TRACEPARENT = Pattern.compile("^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$");
    private static final String INVALID_TRACE = "0".repeat(32);
    private static final String INVALID_SPAN = "0".repeat(16);
    private static final HexFormat HEX = HexFormat.of();
    /** Which ASCII chars are lowercase hex digits; never written once made. */
    private static final boolean[] HEX_DIGIT = hexDigits();
    /** The caller's context while an edge handles its request; read by the post office. */
    private static final ThreadLocal<TraceContext> INCOMING = new ThreadLocal<>();

    public TraceContext {
        if (!hex(traceId, 32) || traceId.equals(INVALID_TRACE)) {
            throw new IllegalArgumentException("a trace id is 32 lowercase hex digits, not all zero");
        }
        if (!validSpan(spanId) || parentSpanId.isPresent() && !validSpan(parentSpanId.get())) {
            throw new IllegalArgumentException("a span id is 16 lowercase hex digits, not all zero");
        }
    }

    /** A new trace, this span its root. */
    public static TraceContext fresh() {
        return new TraceContext(random(16), random(8), Optional.empty());
    }

    /** A new span in this trace, following this one. */
    public TraceContext child() {
        return new TraceContext(traceId, random(8), Optional.of(spanId));
    }

    /**
     * The span named {@code name} under this one: the same ids every time it is asked for, so
     * spans made after the fact (a commit, a delivery, a tool call) need not be stored to be found.
     */
    public TraceContext child(String name) {
        // a 64-bit mix (splitmix64's finalizer over each char): ids to tell spans apart, not a secret
        long h = Long.parseUnsignedLong(spanId, 16);
        for (int i = 0; i < name.length(); i++) {
            h = mix(h ^ name.charAt(i));
        }
        return new TraceContext(traceId, HEX.toHexDigits(mix(h) | 1), Optional.of(spanId)); // never all zero
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * A W3C {@code traceparent} header ({@code 00-<trace id>-<parent id>-<flags>}): the caller's
     * span, which the hub's spans follow. Anything malformed is ignored, as the spec says: the
     * hub then starts a trace of its own rather than refusing the request.
     */
    public static Optional<TraceContext> parse(String traceparent) {
        if (traceparent == null) {
            return Optional.empty();
        }
        var m = TRACEPARENT.matcher(traceparent.strip());
        if (!m.matches() || m.group(1).equals("ff") || m.group(1).equals("00") && m.group(5) != null
                || m.group(2).equals(INVALID_TRACE) || m.group(3).equals(INVALID_SPAN)) {
            return Optional.empty();
        }
        return Optional.of(new TraceContext(m.group(2), m.group(3), Optional.empty()));
    }

    /** This span as a {@code traceparent} header value (sampled). */
    public String traceparent() {
        return "00-" + traceId + "-" + spanId + "-01";
    }

    /** The stored form: {@code traceId:spanId[:parentSpanId]}. */
    public String stored() {
        return traceId + ":" + spanId + parentSpanId.map(p -> ":" + p).orElse("");
    }

    /**
     * Reads {@link #stored()}. An envelope stored before traces were kept, or one whose context
     * came malformed (from a peer gateway), gets {@link #derived}: its place in a trace is never
     * a reason to lose it.
     */
    public static TraceContext fromStored(String stored, String envelopeId) {
        if (stored != null && stored.length() >= 49 && stored.charAt(32) == ':'
                && (stored.length() == 49 || stored.length() == 66 && stored.charAt(49) == ':')) {
            try { // the constructor checks the digits: each envelope read checks them once
                return new TraceContext(stored.substring(0, 32), stored.substring(33, 49),
                        stored.length() == 66 ? Optional.of(stored.substring(50)) : Optional.empty());
            } catch (IllegalArgumentException malformed) {
                return derived(envelopeId);
            }
        }
        return derived(envelopeId);
    }

    /** A context made from an envelope id, stable across reads, for envelopes that never had one. */
    public static TraceContext derived(String envelopeId) {
        String hex = envelopeId.replace("-", "").toLowerCase(java.util.Locale.ROOT);
        if (!hex(hex, 32) || hex.equals(INVALID_TRACE) || !validSpan(hex.substring(16))) {
            hex = HEX.formatHex(java.nio.ByteBuffer.allocate(16).putLong(envelopeId.hashCode() | 1L)
                    .putLong(envelopeId.length() | 1L << 40).array());
        }
        return new TraceContext(hex, hex.substring(16), Optional.empty());
    }

    /**
     * Makes {@code incoming} the caller's context until the returned scope is closed (the
     * edge's job, once per request, in try-with-resources); the one before comes back then.
     */
    public static Scope enter(Optional<TraceContext> incoming) {
        TraceContext before = INCOMING.get();
        INCOMING.set(incoming.orElse(null));
        return new Scope(before);
    }

    /** The caller's context in force; closing it restores the one before. */
    public record Scope(TraceContext before) implements AutoCloseable {
        @Override
        public void close() {
            if (before == null) {
                INCOMING.remove();
            } else {
                INCOMING.set(before);
            }
        }
    }

    /** The context of the call being handled, when its edge was given one. */
    public static Optional<TraceContext> incoming() {
        return Optional.ofNullable(INCOMING.get());
    }

    /**
     * The context of a new envelope: following {@code conversation} (the envelope it answers)
     * when there is one — under the caller's span when the caller is in that trace — else the
     * caller's span, else a trace of its own.
     */
    static TraceContext forEnvelope(Optional<TraceContext> conversation) {
        Optional<TraceContext> caller = incoming();
        if (conversation.isPresent()) {
            String trace = conversation.get().traceId();
            return caller.filter(c -> c.traceId().equals(trace)).orElse(conversation.get()).child();
        }
        return caller.map(TraceContext::child).orElseGet(TraceContext::fresh);
    }

    private static boolean validSpan(String span) {
        return hex(span, 16) && !span.equals(INVALID_SPAN);
    }

    /**
     * Exactly {@code length} lowercase hex digits. Each char is looked up ({@link #HEX_DIGIT}):
     * this runs for every envelope read or made, and a digit-or-letter test per char, mispredicted
     * about every other random digit, took 265 ns a context against 53.
     */
    private static boolean hex(String s, int length) {
        if (s == null || s.length() != length) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char c = s.charAt(i);
            if (c >= HEX_DIGIT.length || !HEX_DIGIT[c]) {
                return false;
            }
        }
        return true;
    }

    private static boolean[] hexDigits() {
        boolean[] digits = new boolean[128];
        for (char digit : "0123456789abcdef".toCharArray()) { // no stream or lambda: the CLI's start loads this class
            digits[digit] = true;
        }
        return digits;
    }

    private static String random(int bytes) {
        byte[] out = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(out);
        out[bytes - 1] |= 1; // never all zero
        return HEX.formatHex(out);
    }
}
