package dev.parley.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every rule of the sweep and its boundaries, with the clock in the test's hand. */
class SweepTest {
    private static final Instant CLAIMED = Instant.parse("2026-11-24T10:00:00Z");
    private static final NodeId WORKER = new NodeId("worker");

    private static Claim claim(int tries, Optional<Duration> declared, Optional<Instant> heartbeat) {
        return new Claim("e1", WORKER, CLAIMED, tries, declared,
                heartbeat.map(at -> new Claim.Heartbeat(at, Optional.of("bash"), Optional.of(at))));
    }

    private static Instant after(Duration d) {
        return CLAIMED.plus(d);
    }

    @Test
    void aGoneProcessLosesItsClaimAtOnceWithBackoffDoublingPerTry() {
        for (int tries = 0; tries < Sweep.MAX_TRIES - 1; tries++) {
            var decision = Sweep.decide(claim(tries, Optional.empty(), Optional.empty()), Sweep.Process.GONE, CLAIMED);
            var reset = assertInstanceOf(Sweep.Decision.Reset.class, decision);
            assertEquals(CLAIMED.plus(Duration.ofSeconds(5L << tries)), reset.notBefore(), "5 s · 2^" + tries);
            assertEquals(false, reset.kill(), "nothing to kill");
            assertTrue(reset.why().contains("gone"), reset.why());
        }
        var giveUp = assertInstanceOf(Sweep.Decision.GiveUp.class, Sweep.decide(
                claim(Sweep.MAX_TRIES - 1, Optional.empty(), Optional.empty()), Sweep.Process.GONE, CLAIMED));
        assertEquals(Sweep.MAX_TRIES, giveUp.tries());
    }

    /** Claim age: no heartbeat since the claim, for longer than max(60 s, the declared timeout). */
    @ParameterizedTest
    @CsvSource({
            // declared (s, 0 = none), seconds since the claim, expected
            "0, 59, keep", "0, 60, keep", "0, 61, reset",
            "30, 60, keep", "30, 61, reset",
            "300, 61, keep", "300, 300, keep", "300, 301, reset"})
    void aClaimWithNoHeartbeatMayWaitTheLongerOfSixtySecondsAndItsDeclaredTimeout(long declared, long seconds,
                                                                                     String expected) {
        Claim claim = claim(0, declared == 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(declared)),
                Optional.empty());
        var decision = Sweep.decide(claim, Sweep.Process.ALIVE, after(Duration.ofSeconds(seconds)));
        if (expected.equals("keep")) {
            assertInstanceOf(Sweep.Decision.Keep.class, decision);
        } else {
            var reset = assertInstanceOf(Sweep.Decision.Reset.class, decision);
            assertTrue(reset.kill(), "a live stuck process is killed");
            assertTrue(reset.why().startsWith("claimed " + seconds + "s ago and no heartbeat since"), reset.why());
        }
    }

    /** Ceiling: the last heartbeat older than max(30 min, the declared timeout of the tool in flight). */
    @ParameterizedTest
    @CsvSource({
            "0, 1800, keep", "0, 1801, reset",
            "3600, 1801, keep", "3600, 3600, keep", "3600, 3601, reset"})
    void aHeartbeatHoldsTheClaimForTheLongerOfThirtyMinutesAndTheDeclaredTimeout(long declared, long silent,
                                                                                  String expected) {
        Instant beat = after(Duration.ofMinutes(5));
        Claim claim = claim(0, declared == 0 ? Optional.empty() : Optional.of(Duration.ofSeconds(declared)),
                Optional.of(beat));
        var decision = Sweep.decide(claim, Sweep.Process.ALIVE, beat.plusSeconds(silent));
        if (expected.equals("keep")) {
            assertInstanceOf(Sweep.Decision.Keep.class, decision);
        } else {
            var reset = assertInstanceOf(Sweep.Decision.Reset.class, decision);
            assertTrue(reset.why().startsWith("no heartbeat for " + DurationText.format(Duration.ofSeconds(silent))),
                    reset.why());
        }
    }

    @Test
    void aHeartbeatEndsTheClaimAgeRuleSoALongToolIsNotKilledAtSixtySeconds() {
        Claim claim = claim(0, Optional.empty(), Optional.of(after(Duration.ofSeconds(1))));
        assertInstanceOf(Sweep.Decision.Keep.class, Sweep.decide(claim, Sweep.Process.ALIVE, after(Duration.ofMinutes(20))));
    }

    @Test
    void aClaimantThatRunsItselfLosesAStaleClaimButNothingIsKilled() {
        var reset = assertInstanceOf(Sweep.Decision.Reset.class, Sweep.decide(
                claim(2, Optional.empty(), Optional.empty()), Sweep.Process.ITS_OWN, after(Duration.ofMinutes(2))));
        assertEquals(false, reset.kill());
        assertEquals(after(Duration.ofMinutes(2)).plusSeconds(20), reset.notBefore(), "5 s · 2^2");
        var giveUp = assertInstanceOf(Sweep.Decision.GiveUp.class, Sweep.decide(
                claim(4, Optional.empty(), Optional.empty()), Sweep.Process.ALIVE, after(Duration.ofMinutes(2))));
        assertTrue(giveUp.kill());
        assertTrue(giveUp.why().endsWith("taken back 5 times"), giveUp.why());
    }

    @Test
    void aFreshClaimIsKeptEvenWithoutAHeartbeat() {
        assertInstanceOf(Sweep.Decision.Keep.class, Sweep.decide(claim(0, Optional.empty(), Optional.empty()),
                Sweep.Process.ALIVE, CLAIMED));
    }

    @Test
    void durationsReadAsTheyParse() {
        for (String text : new String[] {"250ms", "61s", "30m", "90m"}) {
            assertEquals(text, DurationText.format(DurationText.parse(text)));
        }
    }
}
