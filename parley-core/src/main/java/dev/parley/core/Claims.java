package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The agent protocol's claims: a receiver claims an envelope ({@code processing}), heartbeats
 * while it works, and acks or replies (through {@link Messages}); the {@linkplain #sweep sweep}
 * takes back the claims of claimants that died or went silent ({@link Sweep} decides).
 */
public final class Claims {
    /** What one sweep did, for the metrics. */
    public record Swept(int kept, int reset, int givenUp, int killed) {
    }

    /** Longest tool name a heartbeat may carry. */
    public static final int MAX_TOOL = 200;
    /** Longest timeout a claim or heartbeat may declare. */
    public static final Duration MAX_DECLARED = Duration.ofHours(24);

    private final ClaimStore claims;
    private final EventStore store;
    private final Notices notices;
    private final PolicyRules rules;
    private final InstantSource clock;

    public Claims(ClaimStore claims, EventStore store, Notices notices, PolicyRules rules, InstantSource clock) {
        this.claims = claims;
        this.store = store;
        this.notices = notices;
        this.rules = rules;
        this.clock = clock;
    }

    /** The receiver claims envelope {@code id}, declaring how long its work may take, if it knows. */
    public Claim claim(Principal caller, String id, Optional<Duration> declared) {
        NodeId receiver = Messages.receiver(store, caller, id, "claim");
        Instant now = clock.instant();
        AuditEntry audit = new AuditEntry(now, caller.name(), "claim", id, AuditEntry.Decision.ALLOW,
                declared.map(d -> "declared " + DurationText.format(d)).orElse("claimed"), Optional.of(id), rules.version());
        return claims.claim(id, receiver, checked(declared), now, audit);
    }

    /** The claim held on an envelope the caller may already see (its status), if one is. */
    public Optional<Claim> held(String id) {
        return claims.held(id);
    }

    /** Per claimant, the most recent heartbeat of the claims it holds: what it is at now (an agent's view shows it). */
    public Map<NodeId, Claim.Heartbeat> lastHeartbeats() {
        Map<NodeId, Claim.Heartbeat> out = new HashMap<>();
        claims.lastHeartbeats().forEach((node, claim) -> claim.heartbeat().ifPresent(beat -> out.put(node, beat)));
        return out;
    }

    /** The claimant says it is still at work: on {@code tool} since {@code toolStartedAt}, for at most {@code declared}. */
    public Claim heartbeat(Principal caller, String id, Optional<String> tool, Optional<Instant> toolStartedAt,
                           Optional<Duration> declared) {
        Messages.receiver(store, caller, id, "heartbeat");
        if (tool.isPresent() && (tool.get().isBlank() || tool.get().length() > MAX_TOOL)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "tool must be 1-" + MAX_TOOL + " characters");
        }
        return claims.heartbeat(id, new Claim.Heartbeat(clock.instant(), tool, toolStartedAt), checked(declared));
    }

    /**
     * One pass over every claim at {@code now}: {@code process} says whether the process that
     * made each claim is alive, {@code kill} ends a stuck one once its claim is taken back (each
     * node's at most once a sweep). Every decision that changes something is audited (actor
     * {@code parley}).
     */
    public Swept sweep(Instant now, Function<Claim, Sweep.Process> process, Consumer<NodeId> kill) {
        int kept = 0;
        int reset = 0;
        int givenUp = 0;
        int killed = 0;
        java.util.Set<NodeId> ended = new java.util.HashSet<>();
        for (Claim claim : claims.claims()) {
            Sweep.Process claimant = ended.contains(claim.node()) ? Sweep.Process.GONE : process.apply(claim);
            switch (Sweep.decide(claim, claimant, now)) {
                case Sweep.Decision.Keep keep -> kept++;
                case Sweep.Decision.Reset r -> {
                    if (claims.reset(claim, r.why(), r.notBefore(), now, audit(now, "claim.reset", claim, r.why()))) {
                        reset++;
                        killed += end(r.kill(), claim, kill, ended);
                    }
                }
                case Sweep.Decision.GiveUp g -> {
                    Optional<Envelope> notice = store.message(claim.envelopeId())
                            .flatMap(record -> notices.deadLetter(record.envelope(), g.why(), g.tries(), now));
                    if (claims.giveUp(claim, g.why(), g.tries(), now, notice,
                            audit(now, "claim.give_up", claim, g.why()))) {
                        givenUp++;
                        killed += end(g.kill(), claim, kill, ended);
                    }
                }
            }
        }
        return new Swept(kept, reset, givenUp, killed);
    }

    /**
     * Kills the claimant's stuck process, once its claim is taken back: a claim that changed
     * meanwhile (a heartbeat came) is kept, and so is its process.
     */
    private static int end(boolean stuck, Claim claim, Consumer<NodeId> kill, java.util.Set<NodeId> ended) {
        if (!stuck || !ended.add(claim.node())) {
            return 0;
        }
        kill.accept(claim.node());
        return 1;
    }

    private AuditEntry audit(Instant now, String action, Claim claim, String why) {
        return new AuditEntry(now, NodeId.HUB.value(), action, claim.node().value(), AuditEntry.Decision.ALLOW, why,
                Optional.of(claim.envelopeId()), rules.version());
    }

    private static Optional<Duration> checked(Optional<Duration> declared) {
        if (declared.isPresent() && (declared.get().isNegative() || declared.get().isZero()
                || declared.get().compareTo(MAX_DECLARED) > 0)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "a declared timeout is 1 ms to 24h");
        }
        return declared;
    }
}
