package dev.parley.server.policy;

import dev.parley.core.IoReason;
import dev.parley.core.PolicyRules;
import dev.parley.server.metrics.Metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The policy rules in force, from a file that is watched for changes. A reload compiles the
 * whole file and swaps one immutable {@link State} in a single step, so a decision sees
 * either the old rule set or the new one, never a mix; a file that does not compile is
 * refused whole, the previous rules stay, and the error is kept for {@code GET /v1/policy}.
 * Without a file the rule set is empty and the built-in ACL decides alone.
 */
public final class LivePolicy implements PolicyRules, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(LivePolicy.class.getName());

    /** Why the last load of the file was refused. */
    public record LoadError(Instant at, String message, List<PolicyCompiler.Problem> problems) {
    }

    /**
     * What is in force and what happened last. {@code counted} and {@code quiet} are the same
     * rules; only the first reports to the metrics (dry-run checks use the second).
     */
    public record State(PolicyRules.Ruleset counted, PolicyRules.Ruleset quiet, PermissionRuleset permissions,
                 PolicyCompiler.Document document, Optional<Path> source, Optional<Instant> loadedAt,
                 Optional<LoadError> lastError) {
        public String version() {
            return counted.version();
        }
    }

    /** What the file looked like when last read: a change of any part means a reread. */
    private record Stamp(long modifiedNanos, long size, Object fileKey) {
    }

    private final PolicyCompiler compiler = new PolicyCompiler();
    private final Optional<Path> file;
    private final Metrics metrics;
    private final InstantSource clock;
    private final AtomicReference<State> state;
    private final ScheduledExecutorService watcher;
    private Stamp lastStamp;          // watcher thread only
    private byte[] lastDigest;        // watcher thread only: the content last acted on
    private boolean recheck;          // watcher thread only: reread once more after a change

    private LivePolicy(Optional<Path> file, Metrics metrics, InstantSource clock, State initial) {
        this.file = file;
        this.metrics = metrics;
        this.clock = clock;
        this.state = new AtomicReference<>(initial);
        this.watcher = file.isEmpty() ? null : Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform()
                .name("parley-policy-watch").daemon(true).unstarted(r));
    }

    /**
     * Loads {@code file} (none: the built-in ACL alone) and watches it every {@code interval}.
     * A file that is missing or does not compile at start stops the hub from starting: it
     * would otherwise run without the rules its operator asked for.
     */
    public static LivePolicy start(Optional<Path> file, Duration interval, Metrics metrics, InstantSource clock) {
        if (file.isEmpty()) {
            return new LivePolicy(file, metrics, clock, new State(Ruleset.NONE, Ruleset.NONE, PermissionRuleset.NONE,
                    new PolicyCompiler.Document(List.of(), List.of()), Optional.empty(), Optional.empty(),
                    Optional.empty()));
        }
        Path path = file.get();
        LivePolicy live = new LivePolicy(file, metrics, clock, null);
        try {
            Stamp stamp = stamp(path);
            byte[] bytes = Files.readAllBytes(path);
            PolicyCompiler.Document document = live.compiler.parse(bytes, path.getFileName().toString());
            live.state.set(live.loaded(document, live.compiler.compile(document)));
            live.lastStamp = stamp;
            live.lastDigest = digest(bytes);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the policy file " + path + ": " + IoReason.of(e), e);
        } catch (PolicyCompiler.Refused e) {
            throw new IllegalArgumentException("the policy file " + path + " is refused: " + e.getMessage());
        }
        LOG.info("policy " + live.state.get().version() + " loaded from " + path + " ("
                + live.state.get().document().rules().size() + " rules, "
                + live.state.get().document().permissions().size() + " permission rules)");
        long millis = interval.toMillis();
        live.watcher.scheduleWithFixedDelay(live::poll, millis, millis, TimeUnit.MILLISECONDS);
        return live;
    }

    @Override
    public Ruleset current() {
        return state.get().counted();
    }

    /** The permission rules in force. */
    public PermissionRuleset permissions() {
        return state.get().permissions();
    }

    /** The same rules, without counting their decisions (dry runs). */
    public PolicyRules quiet() {
        return () -> state.get().quiet();
    }

    public State state() {
        return state.get();
    }

    /** Checks the file now (the watcher does this every interval). */
    synchronized void poll() {
        Path path = file.orElseThrow();
        try {
            Stamp stamp;
            try {
                stamp = stamp(path);
            } catch (NoSuchFileException e) {
                if (lastStamp != null) {
                    lastStamp = null;
                    lastDigest = null;
                    refuse("the policy file " + path + " is missing; the rules in force stay",
                            List.of(new PolicyCompiler.Problem(Optional.empty(), Optional.empty(), "file not found")));
                }
                return;
            }
            boolean changed = !stamp.equals(lastStamp);
            if (!changed && !recheck) {
                return;
            }
            // File times can be coarse: a rewrite within the same tick keeps the stamp, so
            // one more read follows every change.
            recheck = changed;
            lastStamp = stamp;
            byte[] bytes = Files.readAllBytes(path);
            byte[] digest = digest(bytes);
            if (Arrays.equals(digest, lastDigest)) {
                return;
            }
            lastDigest = digest;
            try {
                PolicyCompiler.Document document = compiler.parse(bytes, path.getFileName().toString());
                State next = loaded(document, compiler.compile(document));
                State previous = state.getAndSet(next);
                metrics.policyReloads.increment();
                LOG.info("policy " + next.version() + " loaded from " + path + " (" + document.rules().size() + " rules, "
                        + document.permissions().size() + " permission rules; was "
                        + previous.version() + ")");
            } catch (PolicyCompiler.Refused e) {
                refuse("the policy file " + path + " is refused, the rules in force (" + state.get().version()
                        + ") stay: " + e.getMessage(), e.problems());
            }
        } catch (IOException e) {
            refuse("cannot read the policy file " + path + ": " + IoReason.of(e), List.of(new PolicyCompiler.Problem(
                    Optional.empty(), Optional.empty(), IoReason.of(e))));
        } catch (RuntimeException e) {
            LOG.log(Level.SEVERE, "reading the policy file " + path + " failed", e);
            refuse("the policy file " + path + " could not be read; the rules in force stay and the hub log has the"
                    + " details", List.of(new PolicyCompiler.Problem(Optional.empty(), Optional.empty(),
                    "an internal error")));
        }
    }

    @Override
    public void close() {
        if (watcher != null) {
            watcher.shutdownNow();
        }
    }

    /** The rules' decisions, counted in the metrics. */
    private static CelRuleset.Observer observer(Metrics metrics) {
        return new CelRuleset.Observer() {
            @Override
            public void matched(PolicyRules.Effect effect, String rule) {
                metrics.ruleMatched(effect, rule);
            }

            @Override
            public void failed(String rule) {
                metrics.ruleFailed(rule);
            }
        };
    }

    private State loaded(PolicyCompiler.Document document, PolicyCompiler.Compiled compiled) {
        return new State(compiled.sends().observed(observer(metrics)), compiled.sends(), compiled.permissions(), document,
                file, Optional.of(clock.instant()), Optional.empty());
    }

    private void refuse(String message, List<PolicyCompiler.Problem> problems) {
        metrics.policyReloadFailures.increment();
        LOG.log(Level.WARNING, message);
        state.updateAndGet(s -> new State(s.counted(), s.quiet(), s.permissions(), s.document(), s.source(), s.loadedAt(),
                Optional.of(new LoadError(clock.instant(), message, problems))));
    }

    private static Stamp stamp(Path path) throws IOException {
        BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
        long modified = attributes.lastModifiedTime().to(TimeUnit.NANOSECONDS);
        return new Stamp(modified, attributes.size(), Objects.requireNonNullElse(attributes.fileKey(), ""));
    }

    private static byte[] digest(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }
}
