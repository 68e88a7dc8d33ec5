package dev.parley.core;

import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The receiving side of federation. Another gateway's word is not trusted: before an
 * inbound envelope enters a local inbox, the source gateway must own its sender in the
 * state room (as mirrored into the {@link Graph}), this hub must own its target, and the
 * same {@link AccessPolicy} that the sender's gateway asked must allow the send (a reply,
 * its original). What fails is refused, audited and never delivered; the source's cursor
 * moves past it either way, so one bad record never stops ingestion. Records are taken in
 * batches, each committed in one transaction with its cursor.
 */
public final class Arrivals {

    /** What became of one inbound record. */
    public enum Outcome {
        /** Committed to a local inbox (an envelope) or folded into a timeline (a step). */
        TAKEN,
        /** Already here (a redelivery after a restart): nothing written but the cursor. */
        DUPLICATE,
        /** Refused by the checks above, audited. */
        REFUSED,
        /** Unreadable or oversized, audited. */
        UNREADABLE
    }

    /** A task id as a hub makes them (UUIDs) and as it may appear in a path. */
    private static final Pattern TASK_ID = Pattern.compile("^[A-Za-z0-9-]{1,64}$");

    private final Graph graph;
    private final AccessPolicy policy;
    private final EventStore store;
    private final FederationStore federation;
    private final TopicStore topics;
    private final TaskStore tasks;
    private final TaskFormat taskFormat;
    private final InstantSource clock;

    public Arrivals(Graph graph, AccessPolicy policy, EventStore store, FederationStore federation, TopicStore topics,
                    TaskStore tasks, TaskFormat taskFormat, InstantSource clock) {
        this.graph = graph;
        this.topics = topics;
        this.tasks = tasks;
        this.taskFormat = taskFormat;
        this.policy = policy;
        this.store = store;
        this.federation = federation;
        this.clock = clock;
    }

    /** One record of another gateway's outbox, read but not yet judged. */
    public sealed interface Record {
        /** Where the record stands in its source's outbox stream. */
        long streamSeq();

        /** An envelope the source published for a node of this hub. */
        record Mail(long streamSeq, Envelope envelope) implements Record {
        }

        /** A step the source reports of an envelope sent from here to one of its nodes. */
        record Step(long streamSeq, RemoteStep step) implements Record {
        }

        /** A record that cannot be read (or is too large), with why. */
        record Unreadable(long streamSeq, String why) implements Record {
        }
    }

    /**
     * Judges a batch of records of gateway {@code source}, in stream order, and commits it in
     * one transaction with the source's cursor at the last record (one fsync for the batch).
     * Answers each record's outcome, in order. All or nothing: when the store fails, nothing
     * of the batch is committed and the caller takes the same batch again.
     */
    public List<Outcome> take(String source, List<Record> batch) {
        List<FederationStore.Inbound> decided = new ArrayList<>(batch.size());
        List<Outcome> judged = new ArrayList<>(batch.size());
        TaskBatch tasks = new TaskBatch(new HashMap<>(), new HashSet<>());
        for (Record record : batch) {
            FederationStore.Inbound inbound = switch (record) {
                case Record.Mail mail -> envelope(source, mail, tasks);
                case Record.Step step -> step(source, step);
                case Record.Unreadable unreadable -> new FederationStore.Inbound.Skip(unreadable.streamSeq(),
                        actor(source).deny("outbox:" + source + "#" + unreadable.streamSeq(),
                                "unreadable record skipped: " + unreadable.why(), policy.version()));
            };
            decided.add(inbound);
            judged.add(switch (inbound) {
                case FederationStore.Inbound.Skip skip -> record instanceof Record.Unreadable ? Outcome.UNREADABLE
                        : Outcome.REFUSED;
                case FederationStore.Inbound.Refused refused -> Outcome.REFUSED;
                case FederationStore.Inbound.Mail m -> Outcome.TAKEN;
                case FederationStore.Inbound.Step s -> Outcome.TAKEN;
            });
        }
        List<Boolean> changed = federation.take(source, decided);
        List<Outcome> outcomes = new ArrayList<>(judged.size());
        for (int i = 0; i < judged.size(); i++) {
            outcomes.add(judged.get(i) == Outcome.TAKEN && !changed.get(i) ? Outcome.DUPLICATE : judged.get(i));
        }
        return outcomes;
    }

    private FederationStore.Inbound envelope(String source, Record.Mail mail, TaskBatch tasks) {
        Envelope envelope = mail.envelope();
        Actor actor = actor(source);
        String target = envelope.to().value();
        Optional<String> owner = graph.owner(envelope.to());
        if (owner.isPresent()) {
            // Published before its sender's gateway learnt that the target moved (a fallback took it
            // over): that gateway publishes it to the new owner when this one does not confirm it.
            return new FederationStore.Inbound.Skip(mail.streamSeq(), actor.deny(target, "target " + target
                    + " belongs to gateway " + owner.get() + " now, not here; left to its sender's gateway",
                    policy.version()));
        }
        AclDecision decision = decide(source, envelope, actor);
        Optional<TaskCopy> copy = Optional.empty();
        if (decision instanceof AclDecision.Allowed && envelope.trace().route() == Route.TASK) {
            TaskJudgement task = task(envelope, tasks, actor.at());
            if (task.refusal().isPresent()) {
                decision = denied(task.refusal().get(), decision.policyVersion());
            }
            copy = task.copy();
            envelope = task.delivered();
        }
        if (decision instanceof AclDecision.Denied denied) {
            AuditEntry audit = new AuditEntry(actor.at(), actor.name(), actor.action(), target,
                    AuditEntry.Decision.DENY, denied.reason(), Optional.of(envelope.id()), denied.policyVersion(),
                    denied.rule());
            // The sender's gateway learns of the refusal (a failed step), so it neither waits for nor
            // publishes again what will never be taken; a record from a gateway that does not own its
            // sender is only audited, so that forged records cannot make this gateway write to a third.
            return graph.owner(envelope.from()).equals(Optional.of(source))
                    ? new FederationStore.Inbound.Refused(mail.streamSeq(), envelope, audit)
                    : new FederationStore.Inbound.Skip(mail.streamSeq(), audit);
        }
        AclDecision.Allowed allowed = (AclDecision.Allowed) decision;
        return new FederationStore.Inbound.Mail(mail.streamSeq(), envelope, actor.allow(target, "from gateway "
                + source + " (" + allowed.why() + ")", Optional.of(envelope.id()), allowed.policyVersion(),
                allowed.rule()), copy);
    }

    /**
     * The task envelopes of one batch, judged before any is stored: each task's copy as it will
     * stand after what the batch holds before, and the envelopes already judged.
     */
    private record TaskBatch(Map<String, Task> copies, Set<String> envelopes) {
    }

    /** An inbound task envelope judged: refused with why, or what it does to the copy here and the envelope delivered. */
    private record TaskJudgement(Optional<String> refusal, Optional<TaskCopy> copy, Envelope delivered) {
        static TaskJudgement refused(String why, Envelope envelope) {
            return new TaskJudgement(Optional.of(why), Optional.empty(), envelope);
        }

        static TaskJudgement delivered(Envelope envelope) {
            return new TaskJudgement(Optional.empty(), Optional.empty(), envelope);
        }
    }

    /**
     * A task envelope from another gateway. An assignment must hand over, well formed, a task
     * this gateway has not seen; it becomes the copy here. A later move must concern a copy
     * here whose parties are the envelope's (the creator cancels, the assignee does the rest)
     * and be one the copy can take; that relation, not the ACL, lets it through, as a reply
     * answers its original. The one race, a cancel crossing the assignee's end, is delivered
     * and moves nothing: a finished copy stays as it finished. The move is taken at this
     * gateway's time, and the envelope delivered shows the copy as it stands here.
     */
    private TaskJudgement task(Envelope envelope, TaskBatch batch, Instant at) {
        if (!batch.envelopes().add(envelope.id()) || store.message(envelope.id()).isPresent()) {
            return TaskJudgement.delivered(envelope); // published again: the store takes it once
        }
        String id = envelope.corrId().orElse("");
        Optional<Task> copy = Optional.ofNullable(batch.copies().get(id)).or(() -> tasks.task(id));
        if (envelope.kind().equals(Tasks.KIND)) {
            Optional<Task> task = taskFormat.assigned(envelope).filter(t -> t.id().equals(id)
                    && TASK_ID.matcher(id).matches() && !t.title().isBlank() && t.title().length() <= NewTask.MAX_TITLE);
            if (task.isEmpty()) {
                return TaskJudgement.refused("a task assignment must carry its task (taskId, a title of 1 to "
                        + NewTask.MAX_TITLE + " characters) and name it as its corrId", envelope);
            }
            if (copy.isPresent()) {
                return TaskJudgement.refused("task " + id + " exists here already", envelope);
            }
            batch.copies().put(id, task.get());
            return new TaskJudgement(Optional.empty(), Optional.of(new TaskCopy.Assigned(task.get())), envelope);
        }
        Optional<TaskEvent> event = envelope.data().flatMap(taskFormat::viewed).filter(t -> t.id().equals(id))
                .flatMap(t -> TaskEvent.told(envelope.kind(), t));
        if (event.isEmpty()) {
            return TaskJudgement.refused("a task notice must carry its task as it stands, name it as its corrId"
                    + " and be of a task kind, not " + envelope.kind(), envelope);
        }
        boolean cancel = event.get() instanceof TaskEvent.Cancel;
        boolean parties = copy.map(t -> cancel
                ? t.creator().equals(envelope.from()) && t.assignee().equals(envelope.to())
                : t.assignee().equals(envelope.from()) && t.creator().equals(envelope.to())).orElse(false);
        if (!parties) {
            return TaskJudgement.refused(envelope.from() + " may not " + event.get().name() + " task " + id + " of "
                    + envelope.to() + " here", envelope);
        }
        if (event.get() instanceof TaskEvent.Complete complete
                && !complete.artifacts().stream().allMatch(Tasks::absolute)) {
            return TaskJudgement.refused("a completed task's artifacts must be named by absolute URIs", envelope);
        }
        TaskCopy.Moved move = new TaskCopy.Moved(event.get(), at);
        Optional<Task> next = move.applyTo(copy.get());
        if (next.isPresent()) {
            batch.copies().put(id, next.get());
            return new TaskJudgement(Optional.empty(), Optional.of(move), envelope.withData(taskFormat.view(next.get())));
        }
        boolean crossed = copy.get().state().terminal() && !(event.get() instanceof TaskEvent.Accept
                || event.get() instanceof TaskEvent.Update);
        return crossed ? new TaskJudgement(Optional.empty(), Optional.of(move), envelope) // the store audits it
                : TaskJudgement.refused("task " + id + " is " + copy.get().state().wire() + " here; it cannot take "
                + event.get().name(), envelope);
    }

    private FederationStore.Inbound step(String source, Record.Step record) {
        RemoteStep step = record.step();
        Optional<MessageRecord> sent = store.message(step.ref());
        NodeId target = sent.map(m -> m.envelope().to()).orElse(null);
        // A gateway the target moved away from still reports what became of what it held.
        if (sent.isEmpty() || graph.owner(sent.get().envelope().from()).isPresent()
                || !(graph.owner(target).equals(Optional.of(source)) || graph.ownedBefore(target, source))) {
            return new FederationStore.Inbound.Skip(record.streamSeq(), actor(source).deny(step.ref(), "gateway "
                    + source + " reported " + step.state().wire() + " for an envelope it does not hold from this"
                    + " gateway", policy.version()));
        }
        return new FederationStore.Inbound.Step(record.streamSeq(), step);
    }

    private AclDecision decide(String source, Envelope envelope, Actor actor) {
        Optional<Node> sender = graph.node(envelope.from());
        Optional<Node> target = graph.node(envelope.to());
        String version = policy.version();
        if (sender.isEmpty() || !graph.owner(envelope.from()).equals(Optional.of(source))) {
            return denied("gateway " + source + " does not own sender " + envelope.from() + " in the state room",
                    version);
        }
        if (target.isEmpty() || graph.owner(envelope.to()).isPresent()) {
            return denied("target " + envelope.to() + " is not a node of this gateway", version);
        }
        Optional<Route> hubRoute = SendRequest.hubRoute(envelope.kind());
        if (hubRoute.isPresent() && hubRoute.get() != envelope.trace().route()) {
            return denied("kind " + envelope.kind() + " travels only as the hub makes it (route "
                    + hubRoute.get().wire() + ")", version);
        }
        if (envelope.trace().route() == Route.TASK && !envelope.kind().equals(Tasks.KIND)) {
            // A task's later moves answer the task, as a reply answers its original: see task().
            return new AclDecision.Allowed(Route.TASK, null, Optional.empty(), version);
        }
        if (envelope.trace().route() == Route.REPLY) {
            boolean answers = envelope.corrId().flatMap(store::message)
                    .map(original -> original.envelope().from().equals(envelope.to())
                            && original.envelope().to().equals(envelope.from()))
                    .orElse(false);
            return answers ? new AclDecision.Allowed(Route.REPLY, null, Optional.empty(), version)
                    : denied("a reply must answer an envelope its target sent to its sender", version);
        }
        Payload payload = new Payload(envelope.text(), envelope.data(), envelope.corrId(), envelope.threadId(),
                envelope.messageId(), envelope.meta());
        RuleInput.EnvelopeFacts facts = RuleInput.EnvelopeFacts.of(envelope.kind(), payload, envelope.topic());
        // A route that widens reach carries only its own kind, as a publication here would make it.
        if (envelope.trace().route() == Route.TOPIC) {
            return !envelope.kind().equals(Topics.EVENT_KIND)
                    ? denied("a topic event must be of kind " + Topics.EVENT_KIND, version)
                    : topicEvent(envelope, sender.get(), target.get(), facts, actor.at());
        }
        if (envelope.trace().route() == Route.BROADCAST) {
            return !envelope.kind().equals(Broadcasts.KIND)
                    ? denied("a broadcast must be of kind " + Broadcasts.KIND, version)
                    : broadcast(sender.get(), target.get(), facts, actor.at());
        }
        return policy.decide(sender.get(), target.get(), facts, actor.at());
    }

    /** A topic event: its target must be subscribed here, and the publisher reach it as a publication here would. */
    private AclDecision topicEvent(Envelope envelope, Node publisher, Node target, RuleInput.EnvelopeFacts facts,
                                   Instant at) {
        AccessPolicy.Check check = policy.check(at);
        Optional<TopicName> topic = envelope.topic().flatMap(Arrivals::topicName);
        if (topic.isEmpty()) {
            return denied("a topic event must name a valid topic", check.policyVersion());
        }
        if (topics.subscribers(topic.get()).stream().noneMatch(s -> s.node().equals(target.id()))) {
            return denied(target.id() + " is not subscribed to topic " + topic.get().value() + " here",
                    check.policyVersion());
        }
        return check.decide(RuleInput.Party.of(publisher, graph), target, facts,
                () -> Topics.reach(check, publisher, target, topic.get(),
                        graph.activeGrant(publisher.id(), new GrantTarget.Topic(topic.get()), at)));
    }

    /**
     * A node's broadcast: the target must be in one of the sender's groups, as a broadcast
     * here would select it; rules that deny apply, rules that allow cannot widen it.
     */
    private AclDecision broadcast(Node sender, Node target, RuleInput.EnvelopeFacts facts, Instant at) {
        AccessPolicy.Check check = policy.check(at);
        if (!sender.sharesGroupWith(target)) {
            return denied("a broadcast of " + sender.id() + " reaches only its own groups, not " + target.id(),
                    check.policyVersion());
        }
        return check.decide(RuleInput.Party.of(sender, graph), target, facts,
                () -> check.allowed(Route.BROADCAST, null));
    }

    private static Optional<TopicName> topicName(String value) {
        try {
            return Optional.of(TopicName.of(value));
        } catch (ParleyException e) {
            return Optional.empty();
        }
    }

    private static AclDecision.Denied denied(String reason, String version) {
        return new AclDecision.Denied(reason, Optional.empty(), version);
    }

    private Actor actor(String source) {
        return new Actor("gateway:" + source, "federation.ingest", clock.instant());
    }
}
