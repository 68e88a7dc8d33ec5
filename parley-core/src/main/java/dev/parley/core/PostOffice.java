package dev.parley.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The one way an envelope composed on someone's behalf gets into inboxes: direct sends,
 * replies, topic events, broadcasts and task notices all come through here. Given who acts,
 * the sender, the target(s) and the {@link Draft}, it
 * <ol>
 *   <li>decides each target under one policy check (so a fan-out has one policy version),
 *       or, for an envelope its conversation already allows (a reply, a task's move), takes
 *       the standing route without asking a rule;</li>
 *   <li>audits every decision: a refusal of a single envelope at once, to the event log; a
 *       fan-out's refusals and every allowance in the transaction that appends the
 *       envelopes;</li>
 *   <li>checks the data against the schema of its kind;</li>
 *   <li>appends: one envelope through the caller's {@link Commit}, or a whole fan-out in one
 *       transaction;</li>
 *   <li>throws the refusal ({@code acl_denied} with the rule and version, or
 *       {@code node_not_found}).</li>
 * </ol>
 * The store ports are the callers' own (an inbox append, a task write), so each call names
 * where it writes.
 */
final class PostOffice {

    /**
     * How a fan-out reaches one target by itself, in the ACL's place (a topic grant, a
     * broadcast's group); policy rules apply around it.
     */
    @FunctionalInterface
    interface Reach {
        AclDecision of(AccessPolicy.Check check, Node target);
    }

    /** Commits one allowed envelope together with the audit entry of its decision. */
    @FunctionalInterface
    interface Commit<R> {
        R commit(Envelope envelope, AuditEntry audit);
    }

    private final Graph graph;
    private final AccessPolicy policy;
    private final PayloadSchemas schemas;
    private final IdGenerator ids;

    /**
     * @param schemas what the senders' data must satisfy; {@link PayloadSchemas#NONE} where the
     *                hub composes the data itself (a task's envelopes carry its view of the task)
     */
    PostOffice(Graph graph, AccessPolicy policy, PayloadSchemas schemas, IdGenerator ids) {
        this.graph = graph;
        this.policy = policy;
        this.schemas = schemas;
        this.ids = ids;
    }

    /**
     * One envelope from {@code sender} to {@code to}, decided by the access policy around the
     * built-in ACL (a send, a task's assignment). An unknown target and a refusal are audited
     * to {@code log} and thrown.
     *
     * @param about what the audit reason names before the decision (a task), if anything
     */
    <R> R send(Actor actor, Node sender, NodeId to, Draft draft, Optional<String> about, EventStore log,
               Commit<R> commit) {
        return switch (judge(actor, sender, to, draft)) {
            case Verdict.Refused refused -> {
                log.audit(refused.audit());
                throw refused.refusal();
            }
            case Verdict.Allowed allowed -> {
                check(draft);
                String why = about.isPresent() ? about.get() + " (" + allowed.decision().why() + ")"
                        : allowed.decision().why();
                yield deliver(actor, to, draft, allowed.decision(), why, commit);
            }
        };
    }

    /** The access decision on one envelope, before anything is written. */
    sealed interface Verdict {
        /** It may go, by {@code decision}. */
        record Allowed(AclDecision.Allowed decision) implements Verdict {
        }

        /** It may not: {@code audit} is the entry the refusal owes the log, {@code refusal} what the caller is told. */
        record Refused(AuditEntry audit, ParleyException refusal) implements Verdict {
        }
    }

    /**
     * The decision {@link #send} takes, with nothing written: for an envelope that is not
     * appended now (a schedule is created on it, and decided again when it fires), whose
     * caller writes the refusal's audit entry with what it does about it.
     */
    Verdict judge(Actor actor, Node sender, NodeId to, Draft draft) {
        return judge(policy.check(actor.at()), actor, sender, to, draft);
    }

    /** {@link #judge(Actor, Node, NodeId, Draft)} under {@code check}, which several decisions may share. */
    private Verdict judge(AccessPolicy.Check check, Actor actor, Node sender, NodeId to, Draft draft) {
        Optional<Node> target = graph.node(to);
        if (target.isEmpty()) {
            return new Verdict.Refused(actor.deny(to.value(), "target node does not exist", check.policyVersion()),
                    Registry.notFound(to));
        }
        return switch (check.decide(sender, target.get(), draft::facts)) {
            case AclDecision.Denied denied -> new Verdict.Refused(actor.deny(to.value(), denied), refusal(denied));
            case AclDecision.Allowed allowed -> new Verdict.Allowed(allowed);
        };
    }

    /**
     * One direct send of a batch: its target, its draft, its reply deadline if asked for, and
     * the refusal its caller found before any decision (a {@code from} that is not the sender).
     */
    record Item(NodeId to, Draft draft, Optional<Instant> replyBy, Optional<ParleyException> refused) {
    }

    /**
     * Many direct sends of one sender (a batch), each decided as {@link #send} decides one,
     * all under one check (one policy version); a refused item or one whose data breaks its
     * schema fails by itself. The allowed envelopes, their allowances and the refusals'
     * audit entries are committed in one transaction. Answers in the order of {@code items}.
     */
    List<SendOutcome> sendAll(Actor actor, Node sender, List<Item> items, EventStore store) {
        AccessPolicy.Check check = policy.check(actor.at());
        SendOutcome[] outcomes = new SendOutcome[items.size()];
        List<Integer> sent = new ArrayList<>(items.size());
        List<EventStore.Send> sends = new ArrayList<>(items.size());
        List<AuditEntry> refusals = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            Item item = items.get(i);
            if (item.refused().isPresent()) {
                outcomes[i] = new SendOutcome.Refused(item.refused().get());
                continue;
            }
            switch (judge(check, actor, sender, item.to(), item.draft())) {
                case Verdict.Refused refused -> {
                    refusals.add(refused.audit());
                    outcomes[i] = new SendOutcome.Refused(refused.refusal());
                }
                case Verdict.Allowed allowed -> {
                    try {
                        check(item.draft());
                    } catch (ParleyException violation) {
                        outcomes[i] = new SendOutcome.Refused(violation);
                        continue;
                    }
                    deliver(actor, item.to(), item.draft(), allowed.decision(), allowed.decision().why(),
                            (envelope, audit) -> sends.add(new EventStore.Send(envelope, audit, item.replyBy())));
                    sent.add(i);
                }
            }
        }
        if (!sends.isEmpty() || !refusals.isEmpty()) {
            List<Appended> appended = store.appendBatch(sends, refusals);
            for (int k = 0; k < sent.size(); k++) {
                outcomes[sent.get(k)] = new SendOutcome.Sent(appended.get(k));
            }
        }
        return List.of(outcomes);
    }

    /**
     * One envelope its conversation already allows: a reply to the sender of the original,
     * a task's move to its other party. No rule is asked; the allowance is audited with
     * {@code why} under the version in force. The caller has made sure of the target.
     */
    <R> R answer(Actor actor, NodeId to, Draft draft, String why, Commit<R> commit) {
        check(draft);
        AclDecision.Allowed standing = new AclDecision.Allowed(draft.route().orElseThrow(), null, Optional.empty(),
                policy.version());
        return deliver(actor, to, draft, standing, why, commit);
    }

    /**
     * One draft to many nodes in one transaction: each of {@code recipients} that the access
     * policy lets {@code from} reach (rules around {@code reach}, all under one check) gets
     * its own envelope, correlated to the publication's id; the others are refused. Every
     * decision is audited, and one entry for the publication as a whole.
     *
     * @param target how the audit log names the whole ({@code topic:<name>}, {@code broadcast})
     * @param why    what the audit log says of every allowance, in place of the decision's own reason
     */
    Publication publish(Actor actor, String target, RuleInput.Party from, List<Node> recipients, Draft draft,
                        Reach reach, Optional<String> why, FanoutStore store) {
        check(draft);
        AccessPolicy.Check check = policy.check(actor.at());
        RuleInput.EnvelopeFacts facts = draft.facts();
        String id = ids.next();
        Draft correlated = draft.correlated(id);
        List<Envelope> envelopes = new ArrayList<>(recipients.size());
        List<AuditEntry> allowances = new ArrayList<>(recipients.size() + 1);
        List<AuditEntry> audits = new ArrayList<>();
        for (Node recipient : recipients) {
            switch (check.decide(from, recipient, facts, () -> reach.of(check, recipient))) {
                case AclDecision.Allowed allowed -> {
                    Envelope envelope = correlated.to(ids.next(), recipient.id(), actor.at(), trace(correlated, allowed));
                    envelopes.add(envelope);
                    allowances.add(actor.allow(recipient.id().value(), why.orElse(allowed.why()) + " (publication "
                            + id + ")", Optional.of(envelope.id()), allowed.policyVersion(), allowed.rule()));
                }
                case AclDecision.Denied denied -> audits.add(actor.deny(recipient.id().value(), denied));
            }
        }
        int refused = audits.size();
        audits.addAll(allowances);
        audits.add(actor.allow(target, "publication " + id + " to " + envelopes.size() + " inbox(es), " + refused
                + " refused", Optional.empty(), check.policyVersion(), Optional.empty()));
        store.appendAll(envelopes, audits);
        return new Publication(id, envelopes.size());
    }

    /** A refusal taken before any access decision, audited to {@code log} under the version in force. */
    ParleyException refuse(Actor actor, String target, String reason, EventStore log, ParleyException refusal) {
        log.audit(actor.deny(target, reason, policy.version()));
        return refusal;
    }

    /** Composes the envelope {@code allowed} lets go and commits it with its allowance, audited with {@code why}. */
    <R> R deliver(Actor actor, NodeId to, Draft draft, AclDecision.Allowed allowed, String why, Commit<R> commit) {
        Envelope envelope = draft.to(ids.next(), to, actor.at(), trace(draft, allowed));
        return commit.commit(envelope, actor.allow(to.value(), why, Optional.of(envelope.id()), allowed.policyVersion(),
                allowed.rule()));
    }

    /** The data against the schema of its kind ({@code schema_violation}). */
    void check(Draft draft) {
        schemas.check(draft.kind(), draft.payload().data());
    }

    /**
     * The trace names the draft's surface, or, for a direct send, the route its decision took,
     * and continues the conversation the draft follows or the caller's trace.
     */
    private static Trace trace(Draft draft, AclDecision.Allowed allowed) {
        return new Trace(1, draft.route().orElse(allowed.route()), allowed.policyVersion(), allowed.rule(),
                TraceContext.forEnvelope(draft.follows()));
    }

    /** The refusal of a send the access policy denied; the detail names the rule and the version. */
    private static ParleyException refusal(AclDecision.Denied denied) {
        Map<String, String> details = new LinkedHashMap<>();
        details.put("reason", denied.reason());
        denied.rule().ifPresent(r -> details.put("rule", r));
        details.put("policyVersion", denied.policyVersion());
        return new ParleyException(ErrorCode.ACL_DENIED, "acl denied: " + denied.reason(), details);
    }
}
