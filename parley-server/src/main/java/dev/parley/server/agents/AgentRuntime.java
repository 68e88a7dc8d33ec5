package dev.parley.server.agents;

import dev.parley.core.AgentSpec;
import dev.parley.core.DeliveryEvent;
import dev.parley.core.Envelope;
import dev.parley.core.EventStore;
import dev.parley.core.Graph;
import dev.parley.core.JsonText;
import dev.parley.core.Messages;
import dev.parley.core.NodeId;
import dev.parley.core.Notifier;
import dev.parley.core.ParleyException;
import dev.parley.core.Payload;
import dev.parley.core.Principal;
import dev.parley.core.Router;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.InstantSource;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs the hub's managed agents with the reference runner ({@code runner: command}): one
 * process per envelope, the envelope's text on its stdin, its stdout the reply. An agent's
 * worker takes the envelopes of its inbox that are not settled, one at a time in inbox order;
 * each ends replied (stdout), processed (no output) or failed (an exit status, a timeout), so
 * what a crash interrupts is taken again after the restart and nothing settled is taken
 * twice. A {@code wake: on-message} agent has no worker until an envelope commits for it and
 * loses it after its idle timeout with nothing left; {@code wake: always} keeps it. The
 * worker acts as the agent's node ({@link Principal.Caller}) through the same routes and
 * policy as any node.
 */
public final class AgentRuntime implements Notifier, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AgentRuntime.class.getName());
    /** Most bytes of a command's stdout taken as its reply; more fails the envelope. */
    static final int MAX_REPLY_BYTES = 256 * 1024;
    /** An agent's log is rotated (one old file kept) past this size. */
    static final long MAX_LOG_BYTES = 1024 * 1024;
    private static final int PAGE = 16;
    /** What a command inherits of the hub's environment: nothing else (no tokens, no keys). */
    private static final List<String> INHERITED = List.of("PATH", "HOME", "LANG", "TZ", "TMPDIR");

    /** An agent's state as the API shows it. */
    public enum State {
        /** No worker: an on-message agent waiting for mail. */
        IDLE,
        /** A worker takes its envelopes. */
        RUNNING,
        /** Stopped by its parent or the admin: nothing wakes it until it is restarted. */
        STOPPED,
        /** Its command cannot be started: nothing wakes it until it is restarted. */
        FAILED;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What the API shows of an agent. */
    public record View(AgentSpec spec, State state, Optional<String> failure, long settled) {
    }

    private final Graph graph;
    private final EventStore store;
    private final Router router;
    private final Messages messages;
    private final Path logs;
    private final InstantSource clock;
    private final Map<NodeId, Agent> agents = new ConcurrentHashMap<>();
    private volatile boolean closed;

    public AgentRuntime(Graph graph, EventStore store, Router router, Messages messages, Path logs, InstantSource clock) {
        this.graph = graph;
        this.store = store;
        this.router = router;
        this.messages = messages;
        this.logs = logs;
        this.clock = clock;
    }

    /**
     * Takes charge of an agent (created now, or found at start): runs it when its wake says so,
     * unless it was {@code stopped}.
     */
    public void adopt(AgentSpec spec, boolean stopped) {
        Agent agent = new Agent(spec);
        agents.put(spec.id(), agent);
        if (stopped) {
            agent.halt(State.STOPPED, Optional.empty());
        } else {
            agent.resume();
        }
    }

    /** An agent this runtime runs (one the caller was allowed to see). */
    public View view(NodeId id) {
        return agents.get(id).view();
    }

    public List<View> views() {
        return agents.values().stream().filter(a -> graph.node(a.spec.id()).isPresent()).map(Agent::view)
                .sorted(Comparator.comparing(v -> v.spec().id().value())).toList();
    }

    /** Stops the agent's worker (and the command it runs); nothing wakes it until {@link #restart}. */
    public View stop(NodeId id) {
        Agent agent = agents.get(id);
        agent.halt(State.STOPPED, Optional.empty());
        return agent.view();
    }

    /** Clears a stop or a failure and runs the agent as its wake says. */
    public View restart(NodeId id) {
        Agent agent = agents.get(id);
        agent.halt(State.STOPPED, Optional.empty());
        agent.resume();
        return agent.view();
    }

    /** The last {@code lines} lines of the agent's log (its commands' stderr and the runner's notes). */
    public List<String> log(NodeId id, int lines) {
        Path file = logs.resolve(id.value() + ".log");
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return List.copyOf(all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            throw new UncheckedIOException("reading the log of agent " + id, e);
        }
    }

    @Override
    public void committed(Envelope envelope) {
        Agent agent = agents.get(envelope.to());
        if (agent != null) {
            agent.wake();
        }
    }

    @Override
    public void close() {
        closed = true;
        agents.values().forEach(a -> a.halt(State.STOPPED, Optional.empty()));
    }

    /** One managed agent: its spec, its worker while it has one, and the process that worker runs. */
    private final class Agent {
        private final AgentSpec spec;
        private final Principal caller;
        private final Path log;
        private final Semaphore mail = new Semaphore(0);
        private State state = State.IDLE;
        private Optional<String> failure = Optional.empty();
        private Thread worker;
        private Process running;
        private long settled;

        Agent(AgentSpec spec) {
            this.spec = spec;
            this.caller = new Principal.Caller(spec.id());
            this.log = logs.resolve(spec.id().value() + ".log");
        }

        synchronized View view() {
            return new View(spec, state, failure, settled);
        }

        /** Mail for the agent: its worker takes it, or one is started unless the agent is stopped or failed. */
        synchronized void wake() {
            mail.release();
            if (worker == null && !closed && (state == State.IDLE || state == State.RUNNING)) {
                state = State.RUNNING;
                worker = Thread.ofVirtual().name("parley-agent-" + spec.id()).start(this::work);
            }
        }

        synchronized void resume() {
            state = State.IDLE;
            failure = Optional.empty();
            if (spec.wake() == AgentSpec.Wake.ALWAYS || !store.unackedAfter(spec.id(), 0, 1).isEmpty()) {
                wake();
            }
        }

        /** Ends the worker, and the command it runs, leaving the agent in {@code to}. */
        void halt(State to, Optional<String> why) {
            Thread stopping;
            synchronized (this) {
                state = to;
                failure = why;
                stopping = worker;
                if (running != null) {
                    destroy(running);
                }
            }
            if (stopping != null && stopping != Thread.currentThread()) {
                stopping.interrupt();
                try {
                    stopping.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** With no mail since the last look, the worker ends (an idle on-message agent); answers whether it did. */
        private synchronized boolean quiet() {
            if (mail.availablePermits() > 0) {
                return false;
            }
            worker = null;
            if (state == State.RUNNING) {
                state = State.IDLE;
            }
            return true;
        }

        private synchronized boolean active() {
            return state == State.RUNNING && !closed && graph.node(spec.id()).isPresent();
        }

        private void work() {
            long after = 0; // past envelopes this worker could not settle (the store failing): taken on the next wake
            try {
                while (active()) {
                    mail.drainPermits();
                    List<Envelope> pending = store.unackedAfter(spec.id(), after, PAGE);
                    for (Envelope envelope : pending) {
                        if (!active()) {
                            return;
                        }
                        take(envelope);
                        after = envelope.seq();
                    }
                    if (!pending.isEmpty()) {
                        continue;
                    }
                    boolean more = spec.wake() == AgentSpec.Wake.ALWAYS
                            ? mail.tryAcquire(Long.MAX_VALUE, TimeUnit.MILLISECONDS)
                            : mail.tryAcquire(spec.idleTimeout().toMillis(), TimeUnit.MILLISECONDS);
                    if (!more && quiet()) {
                        note("idle for " + spec.idleTimeout().toSeconds() + "s: stopped until the next envelope");
                        return;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                synchronized (this) {
                    if (worker == Thread.currentThread()) {
                        worker = null;
                        if (state == State.RUNNING) {
                            state = State.IDLE;
                        }
                    }
                }
            }
        }

        /** Runs the command for one envelope and settles it: replied, processed or failed. */
        private void take(Envelope envelope) throws InterruptedException {
            try {
                if (envelope.from().equals(NodeId.HUB)) { // the hub's notices are for the agent's log, not its command
                    note("hub notice " + envelope.kind() + ": " + envelope.text().orElse(""));
                    messages.ack(caller, envelope.id(), new DeliveryEvent.Processed());
                } else {
                    settle(envelope, run(envelope));
                }
                synchronized (this) {
                    settled++;
                }
            } catch (CannotStart e) {
                note("cannot start " + spec.command().getFirst() + ": " + e.getMessage());
                fail(envelope, "the agent's command cannot be started");
                halt(State.FAILED, Optional.of("cannot start " + spec.command().getFirst() + ": " + e.getMessage()));
            } catch (ParleyException | UncheckedIOException e) {
                LOG.log(Level.WARNING, "agent " + spec.id() + " could not settle envelope " + envelope.id()
                        + "; it is taken again on the agent's next wake", e);
            }
        }

        private void settle(Envelope envelope, Outcome outcome) {
            switch (outcome) {
                case Outcome.Output output when output.text().isBlank() ->
                        messages.ack(caller, envelope.id(), new DeliveryEvent.Processed());
                case Outcome.Output output -> {
                    try {
                        router.reply(caller, envelope.id(), new Payload(Optional.of(output.text()), Optional.empty(),
                                Optional.empty(), envelope.threadId(), Optional.empty(), Map.of()));
                    } catch (ParleyException refused) {
                        fail(envelope, "the reply was refused: " + refused.getMessage());
                    }
                }
                case Outcome.Failed failed -> fail(envelope, failed.why());
            }
        }

        private void fail(Envelope envelope, String why) {
            note("envelope " + envelope.id() + " failed: " + why);
            messages.ack(caller, envelope.id(), new DeliveryEvent.Failed(why));
        }

        private Outcome run(Envelope envelope) throws InterruptedException, CannotStart {
            ProcessBuilder builder = new ProcessBuilder(spec.command());
            spec.workdir().map(Path::of).map(Path::toFile).ifPresent(builder::directory);
            Map<String, String> env = builder.environment();
            Map<String, String> hub = Map.copyOf(env);
            env.clear();
            INHERITED.forEach(name -> Optional.ofNullable(hub.get(name)).ifPresent(v -> env.put(name, v)));
            for (var e : spec.env().entrySet()) {
                switch (e.getValue()) {
                    case AgentSpec.EnvValue.Text text -> env.put(e.getKey(), text.value());
                    case AgentSpec.EnvValue.File file -> {
                        try {
                            env.put(e.getKey(), Files.readString(Path.of(file.path())).strip());
                        } catch (IOException | RuntimeException unreadable) {
                            return new Outcome.Failed("env " + e.getKey() + ": its file cannot be read");
                        }
                    }
                }
            }
            env.put("PARLEY_AGENT", spec.id().value());
            env.put("PARLEY_ENVELOPE", envelope.id());
            env.put("PARLEY_FROM", envelope.from().value());
            Process process;
            synchronized (this) {
                if (!active()) {
                    throw new InterruptedException("stopped");
                }
                try {
                    rotateLog();
                    builder.redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
                    process = builder.start();
                } catch (IOException e) {
                    throw new CannotStart(e.getMessage());
                }
                running = process;
            }
            try {
                Future<byte[]> out = read(process.getInputStream());
                byte[] prompt = prompt(envelope);
                Thread.ofVirtual().start(() -> write(process.getOutputStream(), prompt)); // a command may not read it all
                if (!process.waitFor(spec.timeout().toMillis(), TimeUnit.MILLISECONDS)) {
                    destroy(process);
                    return new Outcome.Failed("timed out after " + spec.timeout().toSeconds() + "s");
                }
                byte[] stdout = out.get();
                if (stdout.length > MAX_REPLY_BYTES) {
                    return new Outcome.Failed("the command wrote more than " + MAX_REPLY_BYTES + " bytes");
                }
                return process.exitValue() == 0
                        ? new Outcome.Output(new String(stdout, StandardCharsets.UTF_8).stripTrailing())
                        : new Outcome.Failed("the command exited with status " + process.exitValue());
            } catch (java.util.concurrent.ExecutionException e) {
                return new Outcome.Failed("its output could not be read");
            } finally {
                destroy(process);
                synchronized (this) {
                    running = null;
                }
            }
        }

        private void note(String line) {
            try {
                rotateLog();
                Files.writeString(log, "[parley " + clock.instant() + "] " + line + "\n",
                        StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                        java.nio.file.StandardOpenOption.APPEND);
            } catch (IOException e) {
                LOG.log(Level.WARNING, "agent " + spec.id() + ": " + line + " (its log cannot be written)", e);
            }
        }

        private synchronized void rotateLog() throws IOException {
            Files.createDirectories(logs);
            if (Files.exists(log) && Files.size(log) > MAX_LOG_BYTES) {
                Files.move(log, log.resolveSibling(log.getFileName() + ".1"), StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /** What a command made of an envelope. */
    private sealed interface Outcome {
        record Output(String text) implements Outcome {
        }

        record Failed(String why) implements Outcome {
        }
    }

    /** The command could not be started at all (missing, not executable): no envelope of it can succeed. */
    private static final class CannotStart extends Exception {
        CannotStart(String why) {
            super(why);
        }
    }

    /** The envelope as the command reads it: its text, or its data when it has no text. */
    private static byte[] prompt(Envelope envelope) {
        return envelope.text().or(() -> envelope.data().map(JsonText::json)).orElse("")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** Reads a stream to its end on its own thread, keeping at most one byte past the reply limit. */
    private static Future<byte[]> read(InputStream in) {
        var future = new java.util.concurrent.CompletableFuture<byte[]>();
        Thread.ofVirtual().start(() -> {
            try (in) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    if (out.size() <= MAX_REPLY_BYTES) {
                        out.write(buffer, 0, Math.min(n, MAX_REPLY_BYTES + 1 - out.size()));
                    }
                }
                future.complete(out.toByteArray());
            } catch (IOException e) {
                future.completeExceptionally(e);
            }
        });
        return future;
    }

    /** Writes the prompt and closes stdin; a command that exits without reading it is no error. */
    private static void write(OutputStream stdin, byte[] prompt) {
        try (stdin) {
            stdin.write(prompt);
        } catch (IOException ignored) {
            // the command closed its stdin early: it answers from what it read
        }
    }

    /** Kills a command and everything it started that still descends from it, and waits for it to be gone. */
    private static void destroy(Process process) {
        List<ProcessHandle> descendants = process.descendants().toList();
        descendants.forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
            for (ProcessHandle d : descendants) {
                d.onExit().get(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            LOG.log(Level.WARNING, "a command's process did not end within 5 s of SIGKILL", e);
        }
    }
}
