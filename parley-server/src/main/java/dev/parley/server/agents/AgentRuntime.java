package dev.parley.server.agents;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.AgentSpec;
import dev.parley.core.Chats;
import dev.parley.core.Claim;
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
import dev.parley.core.Sweep;
import dev.parley.core.Task;
import dev.parley.core.TaskEvent;
import dev.parley.core.TaskQuery;
import dev.parley.core.TaskState;
import dev.parley.core.Tasks;
import dev.parley.core.TraceContext;
import dev.parley.core.Traces;
import dev.parley.server.wire.Json;
import dev.parley.trace.ToolKinds;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;
import dev.parley.trace.TraceEvents;
import dev.parley.trace.adapter.CommandAdapter;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs the hub's managed agents with the reference runner ({@code runner: command}): one
 * process per envelope, the envelope's text on its stdin, its stdout the reply. An agent's
 * worker takes the envelopes of its inbox that are not settled, one at a time in inbox order;
 * each ends replied (stdout), processed (no output) or failed (an exit status, a timeout), so
 * what a stop or a crash interrupts is taken again later and nothing settled is taken twice.
 * A {@code wake: on-message} agent has no worker until an envelope commits for it and loses
 * it after its idle timeout with nothing left; {@code wake: always} keeps it. The worker acts
 * as the agent's node ({@link Principal.Caller}) through the same routes and policy as any
 * node.
 *
 * <p>{@link #committed} runs on the store's announcer thread: waking an agent takes no lock
 * and never waits. A worker that ends re-checks for mail after it has let go, so a wake that
 * came while it was ending is never lost.
 */
public final class AgentRuntime implements Notifier, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(AgentRuntime.class.getName());
    /** Most bytes of a command's stdout taken as its reply; more fails the envelope. */
    static final int MAX_REPLY_BYTES = 256 * 1024;
    /** An agent's log is rotated (one old file kept) past this size; a command's stderr is cut there. */
    static final long MAX_LOG_BYTES = 1024 * 1024;
    /** Most commands running at once on this hub, all agents together; the others wait their turn. */
    static final int MAX_RUNNING = 16;
    /** A process that ends sooner than this after its start counts towards a crash loop. */
    private static final long STABLE_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** A process that ends this many times in a row, each soon after its start, fails its agent. */
    static final int MAX_CRASHES = 5;
    /** How often a worker with nothing to do looks whether its node still exists. */
    private static final long LOOK_MS = 60_000;
    private static final int PAGE = 16;
    /** What a command inherits of the hub's environment: nothing else (no tokens, no keys). */
    private static final List<String> INHERITED = List.of("PATH", "LANG", "TZ");

    /** An agent's state as the API shows it. */
    public enum State {
        /** No worker: an on-message agent waiting for mail. */
        IDLE,
        /** A worker takes its envelopes. */
        RUNNING,
        /**
         * Stopped by its parent or the admin, or by the hub when its process ended as its restart
         * policy leaves it: nothing wakes it until it is restarted.
         */
        STOPPED,
        /**
         * Its command cannot be started, its process crash-looped or failed under {@code restart:
         * never}: nothing wakes it, also across hub restarts, until it is restarted.
         */
        FAILED;

        public String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * What the API shows of an agent; {@code restarts}: how many times its supervisor started its
     * process again after it ended (crash loop and restart policy), since this hub started.
     */
    public record View(AgentSpec spec, State state, Optional<String> failure, long settled, long restarts) {
    }

    private final Graph graph;
    private final EventStore store;
    private final Router router;
    private final Messages messages;
    /** The tasks the agents' commands carry out: a task's envelope is answered by completing or failing the task. */
    private final Tasks tasks;
    /** Formats a chat message's conversation for the command that answers it. */
    private final Chats chats;
    private final Path home;
    /** Told, before the agent turns failed, why (its command cannot be started, …): the failure outlives the hub. */
    private final BiConsumer<NodeId, String> failed;
    /** Told, before the agent turns stopped, why its process is not started again: the stop outlives the hub. */
    private final BiConsumer<NodeId, String> ended;
    private final InstantSource clock;
    /** Issues a fresh token for an agent whose process starts (runner: process); the one before stops working. */
    private final Function<NodeId, String> credential;
    /** The hub's URL, for the processes that speak the agent protocol to it. */
    private final Supplier<String> url;
    private final Semaphore commands = new Semaphore(MAX_RUNNING);
    private final Traces traces;
    private final Map<NodeId, Agent> agents = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** {@code home}: where each agent gets its working directory ({@code <id>/}) and log ({@code <id>.log}). */
    public AgentRuntime(Graph graph, EventStore store, Router router, Messages messages, Tasks tasks, Chats chats,
                        Traces traces, Path home,
                        BiConsumer<NodeId, String> failed, BiConsumer<NodeId, String> ended,
                        Function<NodeId, String> credential, Supplier<String> url, InstantSource clock) {
        this.failed = failed;
        this.ended = ended;
        this.credential = credential;
        this.url = url;
        this.graph = graph;
        this.store = store;
        this.router = router;
        this.messages = messages;
        this.tasks = tasks;
        this.chats = chats;
        this.traces = traces;
        this.home = home;
        this.clock = clock;
    }

    /**
     * Takes charge of an agent (created now, or found at start): runs it when its wake says so,
     * unless it was {@code stopped} or {@code failure} says why it cannot run.
     */
    public void adopt(AgentSpec spec, boolean stopped, Optional<String> failure) {
        Agent agent = new Agent(spec);
        agent.reapLeftover();
        agents.put(spec.id(), agent);
        if (stopped) {
            agent.state.set(State.STOPPED);
        } else if (failure.isPresent()) {
            agent.failure = failure;
            agent.state.set(State.FAILED);
        } else {
            agent.resume();
        }
    }

    /** The agent, if this runtime runs it (a node of another gateway, or one whose spec no longer holds, it does not). */
    public Optional<View> view(NodeId id) {
        return Optional.ofNullable(agents.get(id)).map(Agent::view);
    }

    public List<View> views() {
        return agents.values().stream().filter(a -> graph.node(a.spec.id()).isPresent()).map(Agent::view)
                .sorted(Comparator.comparing(v -> v.spec().id().value())).toList();
    }

    /**
     * Stops the agent's worker and the command it runs, after {@code record} (which writes the
     * stop down); nothing wakes it until {@link #restart}. A stop and a restart of one agent
     * take turns.
     */
    public View stop(NodeId id, Runnable record) {
        Agent agent = agents.get(id);
        agent.control.lock();
        try {
            record.run();
            agent.halt(State.STOPPED, Optional.empty());
            return agent.view();
        } finally {
            agent.control.unlock();
        }
    }

    /** Clears a stop or a failure, after {@code record}, and runs the agent as its wake says. */
    public View restart(NodeId id, Runnable record) {
        Agent agent = agents.get(id);
        agent.control.lock();
        try {
            record.run();
            agent.halt(State.STOPPED, Optional.empty());
            agent.resume();
            return agent.view();
        } finally {
            agent.control.unlock();
        }
    }

    /**
     * Lets go of an agent whose node was deleted with the end of the task it was spawned for:
     * its process is killed, its working directory (the hub's, not one its spec names) and log
     * removed. Nothing for a node this runtime does not run.
     */
    public void retire(NodeId id) {
        Agent agent = agents.remove(id);
        if (agent == null) {
            return;
        }
        agent.control.lock();
        try {
            agent.halt(State.STOPPED, Optional.empty());
        } finally {
            agent.control.unlock();
        }
        agent.discard();
    }

    /** The last {@code lines} lines of the agent's log (its commands' stderr and the runner's notes). */
    public List<String> log(NodeId id, int lines) {
        Path file = home.resolve(id.value() + ".log");
        if (!Files.exists(file)) {
            return List.of();
        }
        Deque<String> last = new ArrayDeque<>(lines);
        try (var reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) { // at most MAX_LOG_BYTES and a run
            for (String line; (line = reader.readLine()) != null; ) {
                if (last.size() == lines) {
                    last.removeFirst();
                }
                last.addLast(line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading the log of agent " + id, e);
        }
        return List.copyOf(last);
    }

    /**
     * For the sweep: the process that made {@code claim}, when this hub runs it ({@code runner:
     * process}): alive when the running process started no later than the claim's last sign
     * of life (so it claimed or heartbeat it), gone otherwise; any other claimant runs itself.
     */
    public Sweep.Process process(Claim claim) {
        Agent agent = agents.get(claim.node());
        if (agent == null || agent.spec.runner() != AgentSpec.Runner.PROCESS) {
            return Sweep.Process.ITS_OWN;
        }
        Process running = agent.running;
        Instant started = agent.started;
        return running != null && running.isAlive() && started != null && !started.isAfter(claim.lastSign())
                ? Sweep.Process.ALIVE : Sweep.Process.GONE;
    }

    /** For the sweep: kills the agent's stuck process; its supervisor starts it again. */
    public void kill(NodeId node) {
        Agent agent = agents.get(node);
        Process running = agent == null ? null : agent.running;
        if (running != null) {
            agent.note("the sweep found its process stuck and killed it (see the audit log: claim.reset)");
            ProcessGroups.kill(running.toHandle());
        }
    }

    @Override
    public void committed(Envelope envelope) {
        Agent agent = agents.get(envelope.to());
        if (agent != null && !chats.contextOnly(envelope)) { // context of a chat never wakes an agent
            agent.wake();
        }
    }

    @Override
    public void close() {
        closed = true;
        agents.values().forEach(a -> a.halt(a.state.get(), a.failure));
    }

    /** One managed agent: its spec, its worker while it has one, and the command that worker runs. */
    private final class Agent {
        private final AgentSpec spec;
        private final Principal caller;
        private final Path log;
        /** The running command's PID and start time: what a hub killed with SIGKILL left behind is found by it. */
        private final Path pid;
        private final Path workdir;
        private final Semaphore mail = new Semaphore(0);
        private final AtomicReference<State> state = new AtomicReference<>(State.IDLE);
        /** Whether a worker is on; set by whoever starts one, cleared by the worker as it ends. */
        private final AtomicBoolean working = new AtomicBoolean();
        private final AtomicLong settled = new AtomicLong();
        /** Its process started again by its supervisor after it ended; in memory, since this hub started. */
        private final AtomicLong restarts = new AtomicLong();
        /** Stop and restart of this agent, in turn. */
        private final ReentrantLock control = new ReentrantLock();
        private volatile Optional<String> failure = Optional.empty();
        private volatile Thread worker;
        private volatile Process running;
        /** When the running process ({@code runner: process}) started, by the hub's clock. */
        private volatile Instant started;

        Agent(AgentSpec spec) {
            this.spec = spec;
            this.caller = new Principal.Caller(spec.id());
            this.log = home.resolve(spec.id().value() + ".log");
            this.pid = home.resolve(spec.id().value() + ".pid");
            this.workdir = spec.workdir().map(Path::of).orElse(home.resolve(spec.id().value()));
        }

        View view() {
            return new View(spec, state.get(), failure, settled.get(), restarts.get());
        }

        /** Mail for the agent: its worker takes it, or one starts unless the agent is stopped or failed. Never waits. */
        void wake() {
            mail.release();
            if (closed || working.get()) {
                return;
            }
            if ((state.compareAndSet(State.IDLE, State.RUNNING) || state.get() == State.RUNNING)
                    && working.compareAndSet(false, true)) {
                worker = Thread.ofVirtual().name("parley-agent-" + spec.id()).start(this::work);
            }
        }

        /** Runs the agent again as its wake says (after a stop, a failure, or at the hub's start). */
        void resume() {
            failure = Optional.empty();
            state.set(State.IDLE);
            if (spec.wake() == AgentSpec.Wake.ALWAYS || !store.unackedAfter(spec.id(), 0, 1).isEmpty()) {
                wake(); // also seen by a worker still ending, which then goes on
            }
        }

        /** Ends the worker and the command it runs, leaving the agent in {@code to}; waits for both. */
        void halt(State to, Optional<String> why) {
            failure = why;
            state.set(to);
            Thread stopping = worker;
            Process command = running;
            if (stopping != null && stopping != Thread.currentThread()) {
                stopping.interrupt();
            }
            if (command != null) {
                ProcessGroups.kill(command.toHandle());
            }
            if (stopping != null && stopping != Thread.currentThread()) {
                try {
                    stopping.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private boolean active() {
            return state.get() == State.RUNNING && !closed && graph.node(spec.id()).isPresent();
        }

        private void work() {
            try {
                if (spec.runner() == AgentSpec.Runner.PROCESS) {
                    supervise();
                    return;
                }
                while (active()) {
                    mail.drainPermits();
                    long after = 0; // past envelopes this pass could not settle (the store failing); the next pass retries them
                    for (List<Envelope> page; active() && !(page = store.unackedAfter(spec.id(), after, PAGE)).isEmpty(); ) {
                        for (Envelope envelope : page) {
                            if (!active()) {
                                return;
                            }
                            take(envelope);
                            after = envelope.seq();
                        }
                    }
                    long wait = spec.wake() == AgentSpec.Wake.ALWAYS ? LOOK_MS
                            : Math.min(LOOK_MS, spec.idleTimeout().toMillis());
                    long idleSince = System.nanoTime();
                    boolean more = false;
                    while (!more && active()) {
                        more = mail.tryAcquire(wait, TimeUnit.MILLISECONDS);
                        if (!more && spec.wake() == AgentSpec.Wake.ON_MESSAGE
                                && System.nanoTime() - idleSince >= spec.idleTimeout().toNanos()) {
                            if (state.compareAndSet(State.RUNNING, State.IDLE)) {
                                note("idle for " + spec.idleTimeout().toSeconds() + "s: stopped until the next envelope");
                            }
                            return;
                        }
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ParleyException | UncheckedIOException e) {
                if (!closed && state.get() == State.RUNNING) { // a stop or the close interrupts reads on purpose
                    LOG.log(Level.WARNING, "agent " + spec.id() + ": its worker ended on a store failure; the next"
                            + " envelope starts it again", e);
                }
            } finally {
                worker = null;
                working.set(false);
                if (mail.availablePermits() > 0) {
                    wake(); // a wake that came while this worker was ending
                }
            }
        }

        /** Runs the command for one envelope and settles it: replied, processed or failed. */
        private void take(Envelope envelope) throws InterruptedException {
            // A task handed to the agent: its corrId is the task's id (a forged one is refused by Tasks: not its task).
            Optional<String> task = envelope.kind().equals(Tasks.KIND) ? envelope.corrId() : Optional.empty();
            try {
                if (envelope.from().equals(NodeId.HUB)) { // the hub's notices are for the agent's log, not its command
                    note("hub notice " + envelope.kind() + ": " + envelope.text().orElse(""));
                    messages.ack(caller, envelope.id(), new DeliveryEvent.Processed());
                } else if (chats.contextOnly(envelope)) { // kept in the inbox as context; the command runs for triggers only
                    messages.ack(caller, envelope.id(), new DeliveryEvent.Processed());
                } else if (task.isPresent()) {
                    carryOut(envelope, task.get());
                } else {
                    Outcome outcome = run(envelope);
                    if (!active()) {
                        return; // stopped under it: the envelope stays for the next run
                    }
                    settle(envelope, outcome);
                }
                settled.incrementAndGet();
            } catch (CannotStart e) {
                if (task.isPresent()) {
                    endTask(envelope, task.get(), new Outcome.Failed("the agent's command cannot be started"));
                } else {
                    fail(envelope, "the agent's command cannot be started");
                }
                cannotStart(e.getMessage());
            } catch (ParleyException | UncheckedIOException e) {
                LOG.log(Level.WARNING, "agent " + spec.id() + " could not settle envelope " + envelope.id()
                        + "; it is taken again on its next pass", e);
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
                    } catch (ParleyException e) {
                        if (e.code().status() >= 500) {
                            throw e; // the hub failing, not a refusal: the envelope stays for the next pass
                        }
                        fail(envelope, "the reply was refused: " + e.getMessage());
                    }
                }
                case Outcome.Failed failed -> fail(envelope, failed.why());
            }
        }

        /**
         * Carries out task {@code taskId} with the command: accepted as it starts, completed with
         * its output ({@code {"text": …}}) or failed with why it failed. A task that ended
         * meanwhile (canceled) is not run; one already accepted (a run the hub's end cut short) is
         * run again.
         */
        private void carryOut(Envelope envelope, String taskId) throws InterruptedException, CannotStart {
            Task task = tasks.show(caller, taskId);
            if (task.state().terminal()) {
                note("task " + taskId + " is " + task.state().wire() + ": not run");
                messages.ack(caller, envelope.id(), new DeliveryEvent.Processed());
                return;
            }
            if (task.state() == TaskState.SUBMITTED) {
                tasks.apply(caller, taskId, new TaskEvent.Accept(Optional.of(spec.timeout().toSeconds())));
            }
            Outcome outcome = run(envelope);
            if (active()) {
                endTask(envelope, taskId, outcome);
            }
        }

        /** Completes or fails the task as {@code outcome} says, then settles its envelope, unless the task took the agent with it. */
        private void endTask(Envelope envelope, String taskId, Outcome outcome) {
            TaskEvent end = switch (outcome) {
                case Outcome.Output output -> {
                    ObjectNode result = Json.object();
                    result.put("text", output.text());
                    yield new TaskEvent.Complete(Optional.of(new JsonText(result.toString())), List.of());
                }
                case Outcome.Failed failed -> new TaskEvent.Fail(failed.why());
            };
            try {
                if (tasks.apply(caller, taskId, end).recycled()) {
                    return; // spawned for this task: its node is gone, and the agent retired with it (Tasks.onRetire)
                }
            } catch (ParleyException e) {
                if (e.code().status() >= 500) {
                    throw e; // the hub failing: the envelope stays for the next pass
                }
                note("task " + taskId + " could not be ended: " + e.getMessage()); // canceled meanwhile
            }
            switch (outcome) {
                case Outcome.Output output -> messages.ack(caller, envelope.id(), new DeliveryEvent.Processed());
                case Outcome.Failed failed -> fail(envelope, failed.why());
            }
        }

        private void fail(Envelope envelope, String why) {
            note("envelope " + envelope.id() + " failed: " + why);
            messages.ack(caller, envelope.id(), new DeliveryEvent.Failed(why));
        }

        /** Runs the command for {@code envelope}, its turn traced by the command adapter and recorded with the hub. */
        private Outcome run(Envelope envelope) throws InterruptedException, CannotStart {
            TraceBuilder trace = new TraceBuilder(clock, event -> { });
            String turn = envelope.id() + ".hub-" + java.util.UUID.randomUUID(); // a run again is another turn
            try {
                return command(envelope, new CommandAdapter(trace, spec.toolKinds().kinds()),
                        envelope.trace().context().child(Traces.TURN_SPAN + turn));
            } finally {
                record(envelope, turn, trace);
            }
        }

        /** Records the turn; one the hub refuses is noted in the agent's log, the envelope settled all the same. */
        private void record(Envelope envelope, String turn, TraceBuilder trace) {
            if (!trace.stopped()) {
                return; // never started
            }
            try {
                traces.record(caller, turn, envelope.id(),
                        ToolKinds.COMMAND, trace.events().stream().map(TraceEvents::stored).toList());
            } catch (ParleyException e) {
                note("the trace of envelope " + envelope.id() + " was not recorded: " + e.getMessage());
            }
        }

        /** Runs the command under {@code span}, the turn's: handed to it as {@code TRACEPARENT}, its sends join the turn. */
        private Outcome command(Envelope envelope, CommandAdapter turn, TraceContext span)
                throws InterruptedException, CannotStart {
            ProcessBuilder builder = new ProcessBuilder(commandLine(spec)).directory(workdir.toFile())
                    .redirectError(ProcessBuilder.Redirect.PIPE);
            Map<String, String> env = builder.environment();
            Optional<String> unreadable = environment(env);
            if (unreadable.isPresent()) {
                return new Outcome.Failed(unreadable.get());
            }
            env.put("PARLEY_ENVELOPE", envelope.id());
            env.put(TraceContext.VARIABLE, span.traceparent());
            env.put("PARLEY_FROM", envelope.from().value());
            commands.acquire();
            Process process = null;
            CompletableFuture<byte[]> err = null;
            try {
                rotateLog();
                Files.createDirectories(workdir);
                process = builder.start();
                running = process;
                remember(process.toHandle());
                byte[] prompt = prompt(envelope, spec);
                turn.started(new String(prompt, StandardCharsets.UTF_8), commandLine(spec), workdir);
                if (!active()) {
                    return ended(turn, TraceEvent.StopReason.CANCELLED, "stopped");
                }
                long deadline = System.nanoTime() + spec.timeout().toNanos();
                CompletableFuture<byte[]> out = read(process.getInputStream(), MAX_REPLY_BYTES + 1);
                err = read(process.getErrorStream(), MAX_LOG_BYTES);
                Process started = process;
                Thread.ofVirtual().start(() -> write(started.getOutputStream(), prompt)); // it may not read it all
                if (!process.waitFor(spec.timeout().toNanos(), TimeUnit.NANOSECONDS)) {
                    return ended(turn, TraceEvent.StopReason.TIMEOUT, "timed out after " + spec.timeout().toSeconds() + "s");
                }
                // What it started may hold stdout open after it exited: the deadline holds for that too.
                byte[] stdout = out.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (stdout.length > MAX_REPLY_BYTES) {
                    return ended(turn, TraceEvent.StopReason.ERROR, "the command wrote more than " + MAX_REPLY_BYTES
                            + " bytes");
                }
                String text = new String(stdout, StandardCharsets.UTF_8);
                turn.exited(process.exitValue(), text);
                return process.exitValue() == 0
                        ? new Outcome.Output(text.stripTrailing())
                        : new Outcome.Failed("the command exited with status " + process.exitValue());
            } catch (IOException e) {
                if (process == null) {
                    throw new CannotStart(e.getMessage());
                }
                return ended(turn, TraceEvent.StopReason.ERROR, "its output could not be read");
            } catch (TimeoutException e) {
                return ended(turn, TraceEvent.StopReason.TIMEOUT, "timed out after " + spec.timeout().toSeconds() + "s");
            } catch (ExecutionException e) {
                return ended(turn, TraceEvent.StopReason.ERROR, "its output could not be read");
            } finally {
                if (process != null) {
                    ProcessGroups.kill(process.toHandle());
                    forget();
                }
                running = null;
                commands.release();
                if (err != null) {
                    appendLog(stderr(err));
                }
            }
        }

        /** The run failed for {@code why}: its trace ends so (when it got as far as starting), and so does the envelope. */
        private static Outcome ended(CommandAdapter turn, TraceEvent.StopReason reason, String why) {
            turn.ended(reason, why);
            return new Outcome.Failed(why);
        }

        /**
         * Fills the environment a command or process of the agent starts with: {@code PATH},
         * {@code LANG}, {@code TZ} of the hub's, {@code HOME}, the spec's {@code env} (secrets read
         * from their files now), {@code PARLEY_AGENT}, the spec's tool blocklist and tool kinds.
         * Says why when a secret's file cannot be read; throws when the program cannot be started
         * at all.
         */
        private Optional<String> environment(Map<String, String> env) throws CannotStart {
            Map<String, String> hub = Map.copyOf(env);
            env.clear();
            INHERITED.forEach(name -> Optional.ofNullable(hub.get(name)).ifPresent(v -> env.put(name, v)));
            env.put("HOME", workdir.toString());
            for (var e : spec.env().entrySet()) {
                switch (e.getValue()) {
                    case AgentSpec.EnvValue.Text text -> env.put(e.getKey(), text.value());
                    case AgentSpec.EnvValue.File file -> {
                        try {
                            env.put(e.getKey(), Files.readString(Path.of(file.path())).strip());
                        } catch (IOException | RuntimeException unreadable) {
                            return Optional.of("env " + e.getKey() + ": its file cannot be read");
                        }
                    }
                }
            }
            if (!runnable(spec.command().getFirst(), Optional.ofNullable(env.get("PATH")), workdir)) {
                // what runs it (setsid, the limits' shell) would start and fail with a status; say so here
                throw new CannotStart("no executable " + spec.command().getFirst() + (spec.command().getFirst()
                        .contains("/") ? "" : " on PATH"));
            }
            env.put("PARLEY_AGENT", spec.id().value());
            spec.toolBlocklist().variable().ifPresent(tools -> env.put(AgentSpec.ToolBlocklist.VARIABLE, tools));
            spec.toolKinds().variable().ifPresent(kinds -> env.put(AgentSpec.ToolKindOverrides.VARIABLE, kinds));
            return Optional.empty();
        }

        /**
         * {@code runner: process}: runs the agent's one long-running process, which speaks the
         * agent protocol to the hub with a token issued for this start. It is started again when
         * it ends with mail left (or always, for {@code wake: always}), after a backoff when it
         * ends soon after its start; {@link #MAX_CRASHES} such ends in a row fail the agent, so it
         * never spins. An {@code on-message} agent's process is stopped after its idle timeout
         * with nothing unsettled in its inbox. Its restart policy may leave an end so
         * ({@link #staysEnded}).
         */
        private void supervise() throws InterruptedException {
            int crashes = 0;
            boolean again = false;
            while (active()) {
                if (again) {
                    restarts.incrementAndGet();
                }
                again = true;
                long started = System.nanoTime();
                Process process;
                try {
                    process = launch();
                } catch (CannotStart e) {
                    cannotStart(e.getMessage());
                    return;
                }
                boolean idle;
                try {
                    idle = watch(process);
                } finally {
                    running = null; // first: the exit this causes wakes nothing (launch)
                    ProcessGroups.kill(process.toHandle());
                    forget();
                }
                if (idle) {
                    onlyMailWakes();
                    return;
                }
                if (!active()) {
                    return;
                }
                int status = process.exitValue();
                boolean quick = System.nanoTime() - started < STABLE_NANOS;
                crashes = quick ? crashes + 1 : 0;
                note("its process exited with status " + status);
                if (staysEnded(status)) {
                    return;
                }
                if (status == 0 && spec.wake() == AgentSpec.Wake.ON_MESSAGE && store.unackedAfter(spec.id(), 0, 1).isEmpty()
                        && state.compareAndSet(State.RUNNING, State.IDLE)) {
                    onlyMailWakes();
                    return;
                }
                if (crashes >= MAX_CRASHES) {
                    failAgent("its process ended " + crashes + " times in a row within " + TimeUnit.NANOSECONDS
                            .toSeconds(STABLE_NANOS) + " s of its start (last status " + status + ")");
                    return;
                }
                if (crashes > 0) {
                    long backoff = 1_000L << (crashes - 1);
                    note("starting it again in " + backoff + " ms");
                    Thread.sleep(backoff); // a stop interrupts it
                }
            }
        }

        /**
         * Whether the process's end with {@code status} (128 + n for signal n) stays so by the
         * spec's restart policy, the agent left as the policy says: status 0 under
         * {@code on-failure} or {@code never} ends an {@code on-message} agent's run as an idle
         * stop does, and stops a {@code wake: always} agent (written down, as a stop of the
         * hub's); any other status under {@code never} fails the agent.
         */
        private boolean staysEnded(int status) {
            AgentSpec.Restart policy = spec.restart().orElse(AgentSpec.Restart.ALWAYS);
            boolean again = switch (policy) {
                case ALWAYS -> true;
                case ON_FAILURE -> status != 0;
                case NEVER -> false;
            };
            if (again) {
                return false;
            }
            String end = "its process exited with status " + status + " (restart: " + policy.wire() + ")";
            if (status != 0) {
                failAgent(end);
            } else if (spec.wake() == AgentSpec.Wake.ON_MESSAGE) {
                // Only mail that comes from now on wakes it: mail it left would start a process that
                // leaves it again at once, a spin. First drain, then idle: a wake in between is kept.
                mail.drainPermits();
                if (state.compareAndSet(State.RUNNING, State.IDLE)) {
                    note(end + ": stopped until the next envelope");
                }
            } else {
                String why = end + ": not started again until restarted";
                note(why);
                ended.accept(spec.id(), why);
                halt(State.STOPPED, Optional.empty());
                failSpawnedTasks(why);
            }
            return true;
        }

        /**
         * Leaves a wake pending only for mail: an exit signalled late (after the supervisor
         * let go of the process) would otherwise start the idle agent again.
         */
        private void onlyMailWakes() {
            mail.drainPermits();
            if (!store.unackedAfter(spec.id(), 0, 1).isEmpty()) {
                mail.release();
            }
        }

        /** Starts the agent's process, its stdout and stderr going to the agent's log. */
        private Process launch() throws CannotStart {
            ProcessBuilder builder = new ProcessBuilder(commandLine(spec)).directory(workdir.toFile())
                    .redirectErrorStream(true);
            Map<String, String> env = builder.environment();
            Optional<String> unreadable = environment(env);
            if (unreadable.isPresent()) {
                throw new CannotStart(unreadable.get());
            }
            env.put("PARLEY_URL", url.get());
            env.put("PARLEY_TOKEN", credential.apply(spec.id()));
            try {
                rotateLog();
                Files.createDirectories(workdir);
                started = clock.instant();
                Process process = builder.start();
                running = process;
                remember(process.toHandle());
                process.getOutputStream().close(); // it reads its work from the hub, not from stdin
                Thread.ofVirtual().start(() -> copyToLog(process.getInputStream()));
                // Its own end (or the sweep's kill) wakes watch(); an end the supervisor causes wakes nothing.
                process.onExit().thenRun(() -> {
                    if (running == process) {
                        mail.release();
                    }
                });
                note("started its process (pid " + process.pid() + ")");
                return process;
            } catch (IOException e) {
                throw new CannotStart(e.getMessage());
            }
        }

        /**
         * Waits while the process runs and the agent is active; returns true when an
         * {@code on-message} agent went idle (its process is then to be stopped).
         */
        private boolean watch(Process process) throws InterruptedException {
            long idleSince = System.nanoTime();
            while (active() && process.isAlive()) {
                long wait = spec.wake() == AgentSpec.Wake.ALWAYS ? LOOK_MS
                        : Math.min(LOOK_MS, Math.max(1, spec.idleTimeout().toMillis()
                                - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - idleSince)));
                if (mail.tryAcquire(wait, TimeUnit.MILLISECONDS)) {
                    mail.drainPermits();
                    idleSince = System.nanoTime();
                } else if (spec.wake() == AgentSpec.Wake.ON_MESSAGE
                        && System.nanoTime() - idleSince >= spec.idleTimeout().toNanos()) {
                    if (!store.unackedAfter(spec.id(), 0, 1).isEmpty()) {
                        idleSince = System.nanoTime(); // at work: not idle
                    } else if (state.compareAndSet(State.RUNNING, State.IDLE)) {
                        note("idle for " + spec.idleTimeout().toSeconds() + "s: stopped until the next envelope");
                        return true;
                    }
                }
            }
            return false;
        }

        private void copyToLog(InputStream output) {
            try (output) {
                byte[] buffer = new byte[8192];
                for (int n; (n = output.read(buffer)) >= 0; ) {
                    appendLog(java.util.Arrays.copyOf(buffer, n));
                }
            } catch (IOException e) {
                // the process is gone and its output with it
            }
        }

        private void cannotStart(String reason) {
            failAgent("cannot start " + spec.command().getFirst() + ": " + reason);
        }

        /**
         * Fails the agent for {@code why}, written down first: nothing wakes it, also across hub
         * restarts, until it is restarted.
         */
        private void failAgent(String why) {
            note(why);
            failed.accept(spec.id(), why);
            halt(State.FAILED, Optional.of(why));
            failSpawnedTasks(why);
        }

        /**
         * A child spawned for a task that will run no more (failed, or stopped by its restart
         * policy) fails its task, which tells the creator and recycles the child.
         */
        private void failSpawnedTasks(String why) {
            try {
                for (Task task : tasks.list(caller, new TaskQuery(Optional.empty(), Optional.of(spec.id()),
                        Optional.empty(), 10))) {
                    if (task.ephemeral() && !task.state().terminal()) {
                        tasks.apply(caller, task.id(), new TaskEvent.Fail("agent " + spec.id() + " stopped: " + why));
                    }
                }
            } catch (ParleyException e) {
                LOG.log(Level.WARNING, "agent " + spec.id() + ": its task could not be failed", e);
            }
        }

        /** Removes what the agent left on disk: its log, its PID file, and its working directory if the hub chose it. */
        void discard() {
            try {
                for (Path file : List.of(log, log.resolveSibling(log.getFileName() + ".1"), pid)) {
                    Files.deleteIfExists(file);
                }
                if (spec.workdir().isEmpty() && Files.isDirectory(workdir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    try (var tree = Files.walk(workdir)) { // walk does not follow links: only the agent's own files go
                        for (Path path : tree.sorted(Comparator.reverseOrder()).toList()) {
                            Files.deleteIfExists(path);
                        }
                    }
                }
            } catch (IOException | UncheckedIOException e) {
                LOG.log(Level.WARNING, "agent " + spec.id() + ": what it left in " + home + " cannot all be removed", e);
            }
        }

        /** Writes down the running command (PID, start time), so that the next hub can find it after a crash. */
        private void remember(ProcessHandle command) {
            try {
                Files.writeString(pid, command.pid() + " " + command.info().startInstant().map(Instant::toEpochMilli)
                        .orElse(0L) + "\n");
            } catch (IOException e) {
                LOG.log(Level.WARNING, "agent " + spec.id() + ": the PID of its command cannot be written down", e);
            }
        }

        private void forget() {
            try {
                Files.deleteIfExists(pid);
            } catch (IOException e) {
                LOG.log(Level.WARNING, "agent " + spec.id() + ": " + pid + " cannot be removed", e);
            }
        }

        /**
         * Kills the command a previous run of the hub left running (it was killed with SIGKILL,
         * its children orphaned): the process written down, if it is still the same one (its start
         * time, so a reused PID is left alone), and what descends from it.
         */
        void reapLeftover() {
            if (!Files.exists(pid)) {
                return;
            }
            try {
                String[] written = Files.readString(pid).strip().split(" ");
                long started = Long.parseLong(written[1]);
                Optional<ProcessHandle> left = ProcessHandle.of(Long.parseLong(written[0])).filter(p -> p.info()
                        .startInstant().map(at -> Math.abs(at.toEpochMilli() - started) < 1_000).orElse(false));
                if (left.isPresent()) {
                    ProcessGroups.kill(left.get());
                    note("killed the command (pid " + left.get().pid() + ") the hub's previous run left running");
                }
            } catch (IOException | RuntimeException e) {
                LOG.log(Level.WARNING, "agent " + spec.id() + ": " + pid + " does not read", e);
            }
            forget();
        }

        private void note(String line) {
            appendLog(("[parley " + clock.instant() + "] " + line.replace('\n', ' ') + "\n")
                    .getBytes(StandardCharsets.UTF_8));
        }

        private synchronized void appendLog(byte[] bytes) {
            if (bytes.length == 0) {
                return;
            }
            try {
                rotateLog();
                Files.write(log, bytes, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                LOG.log(Level.WARNING, "agent " + spec.id() + ": its log cannot be written", e);
            }
        }

        private synchronized void rotateLog() throws IOException {
            Files.createDirectories(home);
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

    /** Whether {@code program} names an executable file: a path (from {@code workdir}), or a name found on {@code path}. */
    public static boolean runnable(String program, Optional<String> path, Path workdir) {
        if (program.contains("/")) {
            return Files.isExecutable(workdir.resolve(program)) && !Files.isDirectory(workdir.resolve(program));
        }
        return path.stream().flatMap(p -> java.util.Arrays.stream(p.split(":"))).filter(dir -> !dir.isEmpty())
                .map(dir -> Path.of(dir, program)).anyMatch(f -> Files.isExecutable(f) && !Files.isDirectory(f));
    }

    /**
     * The command line that runs the agent's command: in a session (and process group) of its
     * own when {@code setsid} is here, so that a stop ends whatever the command started, also
     * what left its parent; under the spec's limits.
     */
    private static List<String> commandLine(AgentSpec spec) {
        return ProcessGroups.inOwnGroup(limited(spec.limits(), spec.command()));
    }

    /**
     * The command line that runs {@code command} under {@code limits}: the shell sets them as
     * rlimits and then becomes the command ({@code exec}, the same process), or fails with why.
     */
    static List<String> limited(AgentSpec.Limits limits, List<String> command) {
        if (!limits.any()) {
            return command;
        }
        List<String> sets = new java.util.ArrayList<>();
        limits.memoryBytes().ifPresent(bytes -> sets.add("ulimit -v " + bytes / 1024));
        limits.cpuTime().ifPresent(cpu -> sets.add("ulimit -t " + cpu.toSeconds()));
        limits.openFiles().ifPresent(n -> sets.add("ulimit -n " + n));
        List<String> line = new java.util.ArrayList<>(List.of("/bin/sh", "-c", String.join(" && ", sets)
                + " && exec \"$@\"", "parley-limits"));
        line.addAll(command);
        return line;
    }

    /** The envelope as the command reads it: its text, or its data when it has no text. */
    /**
     * What the command reads for an envelope: a chat message's conversation, formatted for
     * agents (the newest {@code maxMessagesPerPrompt}, context included; {@link Chats#prompt}),
     * a task's input, or the envelope's text.
     */
    private byte[] prompt(Envelope envelope, AgentSpec spec) {
        if (chats.chat(envelope)) {
            return chats.prompt(envelope, spec.maxMessagesPerPrompt()).getBytes(StandardCharsets.UTF_8);
        }
        if (envelope.kind().equals(Tasks.KIND)) {
            return taskPrompt(envelope).getBytes(StandardCharsets.UTF_8);
        }
        return envelope.text().or(() -> envelope.data().map(JsonText::json)).orElse("")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** A task as its command reads it: its input (a string as it is, other JSON as JSON), else its title. */
    private static String taskPrompt(Envelope assignment) {
        try {
            var input = Json.MAPPER.readTree(assignment.data().map(JsonText::json).orElse("{}")).get("input");
            if (input == null || input.isNull()) {
                return assignment.text().orElse("");
            }
            return input.isTextual() ? input.textValue() : input.toString();
        } catch (IOException e) {
            return assignment.text().orElse("");
        }
    }

    /** Reads a stream to its end on its own thread, keeping at most {@code keep} bytes of it. */
    private static CompletableFuture<byte[]> read(InputStream in, long keep) {
        var future = new CompletableFuture<byte[]>();
        Thread.ofVirtual().start(() -> {
            try (in) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, (int) Math.min(n, Math.max(0, keep - out.size())));
                }
                future.complete(out.toByteArray());
            } catch (IOException e) {
                future.completeExceptionally(e);
            }
        });
        return future;
    }

    /** What a command wrote to stderr, once it is gone (its pipe closes with it); nothing if it cannot be had. */
    private static byte[] stderr(CompletableFuture<byte[]> err) {
        try {
            return err.get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return err.getNow(new byte[0]);
        } catch (ExecutionException | TimeoutException e) {
            return err.getNow(new byte[0]);
        }
    }

    /** Writes the prompt and closes stdin; a command that exits without reading it is no error. */
    private static void write(OutputStream stdin, byte[] prompt) {
        try (stdin) {
            stdin.write(prompt);
        } catch (IOException ignored) {
            // the command closed its stdin early: it answers from what it read
        }
    }
}
