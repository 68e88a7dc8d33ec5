package dev.parley.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The store ports the core's services write to (events, deliveries, topics, tasks, task
 * webhooks), held in memory for unit tests: the SQLite store lives in another module. Every
 * write is all or nothing, like a transaction: a refused write leaves no envelope and no audit
 * entry. Delivery marks made with {@link #markDelivered} wait, as the store's batched marks
 * do, until {@link #commitMarks}. Only what the core's services under test call is kept; the
 * rest throws.
 */
final class MemoryStore implements EventStore, DeliveryStore, TopicStore, TaskStore, TaskWebhookStore {
    private final List<AuditEntry> audit = new ArrayList<>();
    private final Map<String, Envelope> envelopes = new LinkedHashMap<>();
    private final Map<String, DeliveryState> states = new HashMap<>();
    private final Map<String, Instant> replyDeadlines = new HashMap<>();
    private final Map<NodeId, Long> heads = new HashMap<>();
    private final Map<TopicName, List<Subscription>> subscriptions = new HashMap<>();
    private final Map<String, Task> tasks = new LinkedHashMap<>();
    private final List<NodeId> deleted = new ArrayList<>();
    private final Map<String, Instant> deliveredAt = new HashMap<>();
    /** When the ack check of a delivered envelope is due, for a node whose policy asks for one. */
    private final Map<String, Instant> ackChecks = new HashMap<>();
    private final List<Runnable> pendingMarks = new ArrayList<>();
    private final Map<NodeId, DeliveryPolicy> policies = new HashMap<>();
    private final Map<String, DeadLetter> deadLetters = new LinkedHashMap<>();
    private final Map<String, TaskWebhook> webhooks = new LinkedHashMap<>();
    /** How many appends (single or fan-out) were committed. */
    private int commits;

    // ------------------------------------------------------------------ what tests read

    /** Every audit entry committed, in order. */
    synchronized List<AuditEntry> audit() {
        return List.copyOf(audit);
    }

    /** The audit entries of {@code action}, in order. */
    synchronized List<AuditEntry> audit(String action) {
        return audit.stream().filter(e -> e.action().equals(action)).toList();
    }

    /** Every envelope in {@code node}'s inbox, in seq order. */
    synchronized List<Envelope> inbox(NodeId node) {
        return envelopes.values().stream().filter(e -> e.to().equals(node)).toList();
    }

    /** Every envelope committed, in commit order. */
    synchronized List<Envelope> envelopes() {
        return List.copyOf(envelopes.values());
    }

    synchronized DeliveryState state(String envelopeId) {
        return states.get(envelopeId);
    }

    synchronized Optional<Instant> replyDeadline(String envelopeId) {
        return Optional.ofNullable(replyDeadlines.get(envelopeId));
    }

    synchronized int commits() {
        return commits;
    }

    synchronized List<NodeId> deletedNodes() {
        return List.copyOf(deleted);
    }

    synchronized Optional<Instant> ackCheck(String envelopeId) {
        return Optional.ofNullable(ackChecks.get(envelopeId));
    }

    /** Commits the delivery marks {@link #markDelivered} gathered, as the store's next batch would. */
    synchronized void commitMarks() {
        pendingMarks.forEach(Runnable::run);
        pendingMarks.clear();
    }

    // ------------------------------------------------------------------ EventStore

    @Override
    public synchronized void createNode(Node node, String tokenHash, AuditEntry entry) {
        audit.add(entry);
    }

    @Override
    public synchronized void deleteNode(NodeId id, Instant at, AuditEntry entry) {
        deleted.add(id);
        audit.add(entry);
    }

    @Override
    public void replaceToken(NodeId id, String tokenHash, AuditEntry entry) {
        throw new UnsupportedOperationException("token rotation is not under test here");
    }

    @Override
    public synchronized void createGrant(Grant grant, AuditEntry entry) {
        audit.add(entry);
    }

    @Override
    public void deleteGrant(String grantId, AuditEntry entry) {
        throw new UnsupportedOperationException("grant revocation is not under test here");
    }

    @Override
    public synchronized void audit(AuditEntry entry) {
        audit.add(entry);
    }

    @Override
    public synchronized List<Appended> appendBatch(List<Send> sends, List<AuditEntry> refusals) {
        List<Appended> appended = sends.stream()
                .map(send -> append(send.draft(), send.audit(), Optional.empty(), send.replyBy())).toList();
        audit.addAll(refusals);
        return appended;
    }

    @Override
    public synchronized Appended append(Envelope draft, AuditEntry entry, Optional<String> answers,
                                        Optional<Instant> replyBy) {
        Optional<Envelope> earlier = earlier(draft);
        if (earlier.isPresent()) {
            return new Appended(earlier.get(), true);
        }
        Optional<DeliveryState> answered = Optional.empty();
        if (answers.isPresent()) {
            DeliveryState original = states.get(answers.get());
            switch (original.on(new DeliveryEvent.Replied(draft.id()))) {
                case Transition.Moved moved -> answered = Optional.of(moved.to());
                case Transition.Unchanged unchanged -> answered = Optional.of(unchanged.from());
                case Transition.Refused refused -> throw new ParleyException(ErrorCode.INVALID_TRANSITION, refused.reason());
            }
        }
        Envelope appended = commit(draft);
        answered.ifPresent(state -> states.put(answers.get(), state));
        replyBy.ifPresent(at -> replyDeadlines.put(appended.id(), at));
        audit.add(entry);
        commits++;
        return new Appended(appended, false);
    }

    @Override
    public Transition apply(String envelopeId, DeliveryEvent event, Instant at, AuditEntry entry) {
        throw new UnsupportedOperationException("acks are not under test here");
    }

    @Override
    public synchronized Optional<MessageRecord> message(String id) {
        return Optional.ofNullable(envelopes.get(id)).map(e -> new MessageRecord(e, states.get(id), List.of()));
    }

    @Override
    public synchronized List<Envelope> inboxAfter(NodeId node, long after, int limit) {
        return inboxWhere(node, after, limit, e -> true);
    }

    @Override
    public synchronized long headSeq(NodeId node) {
        return heads.getOrDefault(node, 0L);
    }

    @Override
    public synchronized InboxSummary inboxSummary(NodeId node) {
        List<Envelope> inbox = inboxAfter(node, 0, Integer.MAX_VALUE);
        return new InboxSummary(node, headSeq(node), inbox.stream().filter(e -> !deliveredAt.containsKey(e.id())).count(),
                inbox.reversed().stream().map(e -> deliveredAt.get(e.id())).filter(java.util.Objects::nonNull).findFirst());
    }

    @Override
    public GraphSnapshot loadGraph() {
        throw new UnsupportedOperationException("the core's services never load the graph");
    }

    @Override
    public synchronized void markDelivered(List<Envelope> delivered, Instant at, Optional<Duration> redeliverAfter,
                                           Runnable whileWaiting) {
        List<Envelope> batch = List.copyOf(delivered);
        pendingMarks.add(() -> mark(batch, at, redeliverAfter));
    }

    /** While set, the disk is full: a poll's marks cannot be committed at once and wait with the batched ones. */
    volatile boolean full;

    @Override
    public synchronized void markDeliveredNow(List<Envelope> delivered, Instant at, Optional<Duration> redeliverAfter) {
        if (full) { // the store's batched marks keep them while the inbox has room, as this always does
            markDelivered(delivered, at, redeliverAfter, () -> { });
            return;
        }
        mark(delivered, at, redeliverAfter);
    }

    @Override
    public synchronized List<Envelope> undeliveredAfter(NodeId node, long after, int limit) {
        return inboxWhere(node, after, limit, e -> !deliveredAt.containsKey(e.id()));
    }

    @Override
    public synchronized List<Envelope> conversation(NodeId node, String group, long upTo, int limit) {
        List<Envelope> out = new ArrayList<>(inboxWhere(node, 0, Integer.MAX_VALUE, e -> e.seq() <= upTo
                && group.equals(e.meta().get(Chats.GROUP)) && e.from().value().startsWith(Chats.HUMAN_PREFIX)));
        java.util.Collections.reverse(out);
        return out.subList(0, Math.min(limit, out.size()));
    }

    @Override
    public synchronized List<Envelope> unackedAfter(NodeId node, long after, int limit) {
        return inboxWhere(node, after, limit, e -> switch (states.get(e.id())) {
            case PROCESSED, FAILED, REPLIED, DEAD_LETTERED -> false;
            default -> true;
        });
    }

    @Override
    public StoreHealth health() {
        return StoreHealth.OK; // every write here succeeds or throws before it changes anything
    }

    @Override
    public synchronized List<AuditRecord> audit(AuditQuery query) {
        List<AuditRecord> newestFirst = new ArrayList<>();
        for (int i = audit.size() - 1; i >= 0; i--) {
            AuditEntry e = audit.get(i);
            long id = i + 1;
            if (query.node().map(n -> n.equals(e.actor()) || n.equals(e.target())).orElse(true)
                    && query.decision().map(d -> d == e.decision()).orElse(true)
                    && query.rule().map(r -> e.rule().equals(Optional.of(r))).orElse(true)
                    && query.action().map(e.action()::equals).orElse(true)
                    && query.since().map(t -> !e.at().isBefore(t)).orElse(true)
                    && query.until().map(e.at()::isBefore).orElse(true)
                    && query.before().map(b -> id < b).orElse(true)) {
                newestFirst.add(new AuditRecord(id, e));
            }
        }
        return newestFirst.stream().limit(query.limit()).toList();
    }

    @Override
    public int pruneAudit(Instant cutoff, int max) {
        throw new UnsupportedOperationException("retention is the server's");
    }

    @Override
    public long backlog() {
        throw new UnsupportedOperationException("delivery is the server's");
    }

    @Override
    public void close() {
    }

    // ------------------------------------------------------------------ DeliveryStore

    @Override
    public synchronized Map<NodeId, DeliveryPolicy> policies() {
        return Map.copyOf(policies);
    }

    @Override
    public synchronized void putPolicy(NodeId node, DeliveryPolicy policy, AuditEntry entry) {
        policies.put(node, policy);
        audit.add(entry);
    }

    @Override
    public synchronized void removePolicy(NodeId node, AuditEntry entry) {
        policies.remove(node);
        audit.add(entry);
    }

    @Override
    public synchronized void deadLetter(String envelopeId, String reason, int attempts, Instant at,
                                        Optional<Envelope> notice) {
        move(envelopeId, new DeliveryEvent.DeadLettered(reason));
        deadLetters.put(envelopeId, new DeadLetter(envelopes.get(envelopeId), reason, attempts, at));
        notice.ifPresent(this::commit);
    }

    @Override
    public synchronized List<DeadLetter> deadLetters(Optional<NodeId> node, int limit) {
        return deadLetters.values().stream().filter(d -> node.map(d.envelope().to()::equals).orElse(true))
                .sorted(Comparator.comparing(DeadLetter::at).reversed()).limit(limit).toList();
    }

    @Override
    public synchronized Optional<DeadLetter> deadLetter(String envelopeId) {
        return Optional.ofNullable(deadLetters.get(envelopeId));
    }

    @Override
    public synchronized Envelope redrive(String envelopeId, Instant at, AuditEntry entry) {
        if (!deadLetters.containsKey(envelopeId)) {
            throw new ParleyException(ErrorCode.DEAD_LETTER_NOT_FOUND, "no dead letter " + envelopeId);
        }
        deadLetters.remove(envelopeId);
        move(envelopeId, new DeliveryEvent.Redriven(entry.actor()));
        deliveredAt.remove(envelopeId);
        Envelope again = envelopes.get(envelopeId).withAttempt(1);
        envelopes.put(envelopeId, again);
        audit.add(entry);
        return again;
    }

    @Override
    public synchronized void drop(String envelopeId, Instant at, AuditEntry entry) {
        if (deadLetters.remove(envelopeId) == null) {
            throw new ParleyException(ErrorCode.DEAD_LETTER_NOT_FOUND, "no dead letter " + envelopeId);
        }
        audit.add(entry);
    }

    @Override
    public PushesWaiting pushesWaiting(NodeId node) {
        throw new UnsupportedOperationException("the schedule is the dispatcher's");
    }

    @Override
    public DuePage due(Instant now, Optional<DueKey> after, int limit) {
        throw new UnsupportedOperationException("the schedule is the dispatcher's");
    }

    @Override
    public DuePushes duePushes(NodeId node, Instant now, int limit) {
        throw new UnsupportedOperationException("the schedule is the dispatcher's");
    }

    @Override
    public void pushed(List<Pushed> pushes, Instant at) {
        throw new UnsupportedOperationException("the schedule is the dispatcher's");
    }

    @Override
    public void pushFailed(Envelope envelope, DeliveryEvent.PushFailed event, Instant at, Instant retryAt) {
        throw new UnsupportedOperationException("the schedule is the dispatcher's");
    }

    @Override
    public Optional<Envelope> redeliver(String envelopeId, int attempt, Instant at, String why) {
        throw new UnsupportedOperationException("the schedule is the dispatcher's");
    }

    @Override
    public void deadlineMissed(String envelopeId, long withinMs, Instant at, Envelope notice) {
        throw new UnsupportedOperationException("the schedule is the dispatcher's");
    }

    @Override
    public void forget(String envelopeId, Purpose purpose) {
        throw new UnsupportedOperationException("the schedule is the dispatcher's");
    }

    @Override
    public Optional<Envelope> replyTo(String requestId) {
        throw new UnsupportedOperationException("reply waiters are the server's");
    }

    // ------------------------------------------------------------------ TaskWebhookStore

    @Override
    public synchronized void put(TaskWebhook webhook, AuditEntry entry) {
        webhooks.put(webhook.taskId() + "/" + webhook.id(), webhook);
        audit.add(entry);
    }

    @Override
    public synchronized boolean remove(String taskId, String id, AuditEntry entry) {
        boolean existed = webhooks.remove(taskId + "/" + id) != null;
        audit.add(entry);
        return existed;
    }

    @Override
    public synchronized Optional<TaskWebhook> webhook(String taskId, String id) {
        return Optional.ofNullable(webhooks.get(taskId + "/" + id));
    }

    @Override
    public synchronized List<TaskWebhook> webhooks(String taskId) {
        return webhooks.values().stream().filter(w -> w.taskId().equals(taskId)).toList();
    }

    @Override
    public synchronized List<TaskWebhook> all() {
        return List.copyOf(webhooks.values());
    }

    // ------------------------------------------------------------------ FanoutStore, TopicStore

    @Override
    public synchronized List<Envelope> appendAll(List<Envelope> drafts, List<AuditEntry> audits) {
        List<Envelope> appended = drafts.stream().map(this::commit).toList();
        audit.addAll(audits);
        commits++;
        return appended;
    }

    @Override
    public synchronized Subscribed subscribe(Subscription wanted, AuditEntry entry) {
        List<Subscription> topic = subscriptions.computeIfAbsent(wanted.topic(), t -> new ArrayList<>());
        Optional<Subscription> earlier = topic.stream().filter(s -> s.node().equals(wanted.node())).findFirst();
        if (earlier.isPresent()) {
            return new Subscribed(earlier.get(), false);
        }
        topic.add(wanted);
        audit.add(entry);
        return new Subscribed(wanted, true);
    }

    @Override
    public synchronized void unsubscribe(TopicName topic, NodeId node, AuditEntry entry) {
        if (!subscriptions.getOrDefault(topic, new ArrayList<>()).removeIf(s -> s.node().equals(node))) {
            throw new ParleyException(ErrorCode.NOT_SUBSCRIBED, node + " is not subscribed to " + topic.value());
        }
        audit.add(entry);
    }

    @Override
    public synchronized List<Subscription> subscribers(TopicName topic) {
        return List.copyOf(subscriptions.getOrDefault(topic, List.of()));
    }

    // ------------------------------------------------------------------ TaskStore

    @Override
    public synchronized Task create(TaskChange change) {
        Optional<Envelope> earlier = earlier(change.notice());
        if (earlier.isPresent()) { // the creator sent this request before: the task it made
            return tasks.get(earlier.get().corrId().orElseThrow());
        }
        tasks.put(change.task().id(), change.task());
        commit(change.notice());
        audit.add(change.audit());
        commits++;
        return change.task();
    }

    @Override
    public synchronized Task change(String taskId, Function<Task, TaskChange> change) {
        TaskChange changed = change.apply(tasks.get(taskId)); // throws, writing nothing, on an illegal move
        tasks.put(taskId, changed.task());
        commit(changed.notice());
        audit.add(changed.audit());
        commits++;
        return changed.task();
    }

    @Override
    public synchronized Optional<Task> task(String id) {
        return Optional.ofNullable(tasks.get(id));
    }

    @Override
    public synchronized Optional<TraceContext> conversation(String id) {
        return envelopes.values().stream().filter(e -> e.kind().equals(Tasks.KIND) && e.corrId().equals(Optional.of(id)))
                .findFirst().map(e -> e.trace().context());
    }

    @Override
    public synchronized List<Task> tasks(TaskQuery query) {
        return tasks.values().stream()
                .filter(t -> query.involving().map(n -> n.equals(t.creator()) || n.equals(t.assignee())).orElse(true))
                .filter(t -> query.assignee().map(t.assignee()::equals).orElse(true))
                .filter(t -> query.state().map(s -> s == t.state()).orElse(true))
                .sorted(Comparator.comparing(Task::createdAt).reversed())
                .limit(query.limit())
                .toList();
    }

    // ------------------------------------------------------------------

    /** The envelope its sender already sent with the same messageId. */
    private Optional<Envelope> earlier(Envelope draft) {
        if (draft.messageId().isEmpty()) {
            return Optional.empty();
        }
        return envelopes.values().stream()
                .filter(e -> e.from().equals(draft.from()) && e.messageId().equals(draft.messageId()))
                .findFirst();
    }

    private List<Envelope> inboxWhere(NodeId node, long after, int limit, Predicate<Envelope> which) {
        return envelopes.values().stream().filter(e -> e.to().equals(node) && e.seq() > after).filter(which)
                .sorted(Comparator.comparingLong(Envelope::seq)).limit(limit).toList();
    }

    private synchronized void mark(List<Envelope> delivered, Instant at, Optional<Duration> redeliverAfter) {
        for (Envelope e : delivered) {
            if (move(e.id(), new DeliveryEvent.Delivered("stream")) instanceof Transition.Moved) {
                deliveredAt.put(e.id(), at);
                redeliverAfter.ifPresent(after -> ackChecks.put(e.id(), at.plus(after)));
            }
        }
    }

    private Transition move(String envelopeId, DeliveryEvent event) {
        Transition transition = states.get(envelopeId).on(event);
        if (transition instanceof Transition.Moved moved) {
            states.put(envelopeId, moved.to());
        }
        return transition;
    }

    private Envelope commit(Envelope draft) {
        long seq = heads.merge(draft.to(), 1L, Long::sum);
        Envelope appended = draft.withSeq(seq);
        envelopes.put(appended.id(), appended);
        states.put(appended.id(), DeliveryState.ACCEPTED);
        return appended;
    }
}
