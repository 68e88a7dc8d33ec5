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

/**
 * The store ports the core's send paths write to (events, topics, tasks), held in memory for
 * unit tests: the SQLite store lives in another module. Every write is all or nothing, like a
 * transaction: a refused write leaves no envelope and no audit entry. Only what the core's
 * services under test call is kept; the rest throws.
 */
final class MemoryStore implements EventStore, TopicStore, TaskStore {
    private final List<AuditEntry> audit = new ArrayList<>();
    private final Map<String, Envelope> envelopes = new LinkedHashMap<>();
    private final Map<String, DeliveryState> states = new HashMap<>();
    private final Map<String, Instant> replyDeadlines = new HashMap<>();
    private final Map<NodeId, Long> heads = new HashMap<>();
    private final Map<TopicName, List<Subscription>> subscriptions = new HashMap<>();
    private final Map<String, Task> tasks = new LinkedHashMap<>();
    private final List<NodeId> deleted = new ArrayList<>();
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
    public List<Envelope> inboxAfter(NodeId node, long after, int limit) {
        throw new UnsupportedOperationException("tests read inbox() directly");
    }

    @Override
    public long headSeq(NodeId node) {
        throw new UnsupportedOperationException("tests read inbox() directly");
    }

    @Override
    public GraphSnapshot loadGraph() {
        throw new UnsupportedOperationException("the core's services never load the graph");
    }

    @Override
    public void markDelivered(List<Envelope> delivered, Instant at, Optional<Duration> redeliverAfter) {
        throw new UnsupportedOperationException("delivery is the server's");
    }

    @Override
    public void markDeliveredNow(List<Envelope> delivered, Instant at, Optional<Duration> redeliverAfter) {
        throw new UnsupportedOperationException("delivery is the server's");
    }

    @Override
    public List<Envelope> undeliveredAfter(NodeId node, long after, int limit) {
        throw new UnsupportedOperationException("delivery is the server's");
    }

    @Override
    public List<Envelope> unackedAfter(NodeId node, long after, int limit) {
        throw new UnsupportedOperationException("delivery is the server's");
    }

    @Override
    public List<AuditRecord> audit(AuditQuery query) {
        throw new UnsupportedOperationException("tests read audit() directly");
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

    private Envelope commit(Envelope draft) {
        long seq = heads.merge(draft.to(), 1L, Long::sum);
        Envelope appended = draft.withSeq(seq);
        envelopes.put(appended.id(), appended);
        states.put(appended.id(), DeliveryState.ACCEPTED);
        return appended;
    }
}
