package dev.parley.core;

import dev.parley.core.TestRules.Rule;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.parley.core.MemoryHub.as;
import static dev.parley.core.MemoryHub.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Direct sends and replies: who may send, what is audited, what is appended. */
class RouterTest {
    /** Kind {@code order} needs data; any other kind goes as it is. */
    private static final PayloadSchemas SCHEMAS = (kind, data) -> {
        if (kind.equals("order") && data.isEmpty()) {
            throw new ParleyException(ErrorCode.SCHEMA_VIOLATION, "data is required", Map.of("pointer", ""));
        }
    };

    private final MemoryHub hub = new MemoryHub();
    private final MemoryStore store = hub.store;
    private final Router router = new Router(hub.graph, hub.policy, SCHEMAS, store, hub.clock, hub.ids);

    /** lead-a → a1, a2; lead-b → b1. */
    @BeforeEach
    void lineage() {
        hub.node("lead-a", null);
        hub.node("a1", "lead-a");
        hub.node("a2", "lead-a");
        hub.node("lead-b", null);
        hub.node("b1", "lead-b");
    }

    @Test
    void anAllowedSendIsAppendedWithItsDecisionAuditedInTheSameCommit() {
        String version = hub.nextVersion();
        int commits = store.commits();
        Appended appended = router.send(as("a1"), send("a2", "message", text("hi")));

        Envelope envelope = appended.envelope();
        assertFalse(appended.duplicate());
        assertEquals(List.of(envelope), store.inbox(NodeId.of("a2")));
        assertEquals(1, envelope.seq());
        assertEquals(NodeId.of("a1"), envelope.from());
        assertEquals(new Trace(1, Route.INTRA_GROUP, version, Optional.empty(), envelope.trace().context()), envelope.trace());
        assertEquals(commits + 1, store.commits(), "envelope and audit entry in one append");
        assertEquals(List.of(new AuditEntry(MemoryHub.START, "a1", "send", "a2", AuditEntry.Decision.ALLOW, "intra_group",
                Optional.of(envelope.id()), version)), store.audit("send"));
    }

    @Test
    void aSendAcrossGroupsIsRefusedAndTheRefusalAuditedWithItsReasonAndVersion() {
        String version = hub.nextVersion();
        ParleyException e = assertThrows(ParleyException.class,
                () -> router.send(as("a1"), send("b1", "message", text("hi"))));

        assertEquals(ErrorCode.ACL_DENIED, e.code());
        assertEquals(version, e.details().get("policyVersion"));
        assertFalse(e.details().containsKey("rule"), "the ACL decided, not a rule");
        AuditEntry denial = store.audit("send").getFirst();
        assertEquals(AuditEntry.Decision.DENY, denial.decision());
        assertEquals("b1", denial.target());
        assertEquals(e.details().get("reason"), denial.reason());
        assertTrue(denial.reason().contains("different groups"), denial.reason());
        assertEquals(version, denial.policyVersion());
        assertEquals(Optional.empty(), denial.envelopeId());
        assertEquals(List.of(), store.inbox(NodeId.of("b1")));
    }

    @Test
    void aGrantLetsTheSendThroughAndTheAuditNamesIt() {
        Grant grant = hub.grant("a1", new GrantTarget.Node(NodeId.of("b1")));
        Envelope envelope = router.send(as("a1"), send("b1", "message", text("hi"))).envelope();
        assertEquals(Route.GRANT, envelope.trace().route());
        assertEquals("grant " + grant.id(), store.audit("send").getFirst().reason());
    }

    @Test
    void policyRulesDecideAroundTheAclAndTheAuditAndTraceNameTheRule() {
        hub.rules.add(new Rule("no-secrets", PolicyRules.Effect.DENY, in -> in.envelope().kind().equals("secret")));
        hub.rules.add(new Rule("leads-talk", PolicyRules.Effect.ALLOW, in -> in.sender().id().startsWith("lead-")));

        String denyVersion = hub.nextVersion();
        ParleyException denied = assertThrows(ParleyException.class,
                () -> router.send(as("a1"), send("a2", "secret", text("psst"))));
        assertEquals("no-secrets", denied.details().get("rule"));
        AuditEntry denial = store.audit("send").getFirst();
        assertEquals(Optional.of("no-secrets"), denial.rule());
        assertEquals(denyVersion, denial.policyVersion());

        String allowVersion = hub.nextVersion();
        Envelope widened = router.send(as("lead-a"), send("b1", "message", text("hello"))).envelope();
        assertEquals(new Trace(1, Route.POLICY, allowVersion, Optional.of("leads-talk"), widened.trace().context()), widened.trace());
        AuditEntry allowance = store.audit("send").get(1);
        assertEquals("policy rule leads-talk", allowance.reason());
        assertEquals(Optional.of("leads-talk"), allowance.rule());
        assertEquals(allowVersion, allowance.policyVersion());
    }

    @Test
    void anUnknownTargetIsAuditedAndNotFound() {
        String version = hub.nextVersion();
        ParleyException e = assertThrows(ParleyException.class,
                () -> router.send(as("a1"), send("ghost", "message", text("hi"))));
        assertEquals(ErrorCode.NODE_NOT_FOUND, e.code());
        assertEquals(List.of(new AuditEntry(MemoryHub.START, "a1", "send", "ghost", AuditEntry.Decision.DENY,
                "target node does not exist", Optional.empty(), version)), store.audit("send"));
    }

    @Test
    void theSenderIsTheCallerNeverTheBody() {
        SendRequest forged = new SendRequest(NodeId.of("a2"), "message", text("hi"), Optional.of("a2"), Optional.empty());
        ParleyException e = assertThrows(ParleyException.class, () -> router.send(as("a1"), forged));
        assertEquals(ErrorCode.IDENTITY_MISMATCH, e.code());

        SendRequest honest = new SendRequest(NodeId.of("a2"), "message", text("hi"), Optional.of("a1"), Optional.empty());
        assertEquals(NodeId.of("a1"), router.send(as("a1"), honest).envelope().from());
        assertEquals(1, store.audit("send").size(), "the forged send wrote nothing");
    }

    @Test
    void theAdminAndADeletedNodeCannotSend() {
        ParleyException admin = assertThrows(ParleyException.class,
                () -> router.send(MemoryHub.ADMIN, send("a1", "message", text("hi"))));
        assertEquals(ErrorCode.FORBIDDEN, admin.code());

        hub.registry.delete(MemoryHub.ADMIN, NodeId.of("a2"));
        ParleyException gone = assertThrows(ParleyException.class,
                () -> router.send(as("a2"), send("a1", "message", text("hi"))));
        assertEquals(ErrorCode.UNAUTHORIZED, gone.code());
        assertEquals(List.of(), store.audit("send"));
        assertEquals(List.of(), store.envelopes());
    }

    @Test
    void dataIsCheckedAgainstItsSchemaOnlyAfterTheDecisionAllows() {
        ParleyException invalid = assertThrows(ParleyException.class,
                () -> router.send(as("a1"), send("a2", "order", text("no data"))));
        assertEquals(ErrorCode.SCHEMA_VIOLATION, invalid.code());
        assertEquals(List.of(), store.audit("send"), "an allowance is audited only with its envelope");
        assertEquals(List.of(), store.envelopes());

        ParleyException denied = assertThrows(ParleyException.class,
                () -> router.send(as("a1"), send("b1", "order", text("no data"))));
        assertEquals(ErrorCode.ACL_DENIED, denied.code(), "the decision comes first, and is audited");
        assertEquals(AuditEntry.Decision.DENY, store.audit("send").getFirst().decision());
    }

    @Test
    void theEnvelopeKeepsTheSendersMessageIdAndReplyDeadline() {
        Payload keyed = new Payload(Optional.of("hi"), Optional.empty(), Optional.empty(), Optional.of("t-1"),
                Optional.of("m-1"), Map.of("k", "v"));
        SendRequest request = new SendRequest(NodeId.of("a2"), "message", keyed, Optional.empty(),
                Optional.of(Duration.ofSeconds(30)));
        Envelope envelope = router.send(as("a1"), request).envelope();
        assertEquals(Optional.of("m-1"), envelope.messageId());
        assertEquals(Optional.of("t-1"), envelope.threadId());
        assertEquals(Map.of("k", "v"), envelope.meta());
        assertEquals(Optional.of(MemoryHub.START.plusSeconds(30)), store.replyDeadline(envelope.id()));
    }

    @Test
    void onlyTheReceiverRepliesAndNeedsNoGrant() {
        hub.grant("a1", new GrantTarget.Node(NodeId.of("b1")));
        Envelope request = router.send(as("a1"), send("b1", "message", text("question"))).envelope();

        // the sender may see its envelope but not answer it; to anyone else it does not exist
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(ParleyException.class,
                () -> router.reply(as("a1"), request.id(), text("answer"))).code());
        assertEquals(ErrorCode.MESSAGE_NOT_FOUND, assertThrows(ParleyException.class,
                () -> router.reply(as("a2"), request.id(), text("answer"))).code());
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(ParleyException.class,
                () -> router.reply(MemoryHub.ADMIN, request.id(), text("answer"))).code());

        String version = hub.nextVersion();
        Envelope reply = router.reply(as("b1"), request.id(), text("answer")).envelope();
        assertEquals(NodeId.of("a1"), reply.to());
        assertEquals("reply", reply.kind());
        assertEquals(Optional.of(request.id()), reply.corrId());
        assertEquals(new Trace(1, Route.REPLY, version, Optional.empty(), reply.trace().context()), reply.trace());
        // the reply continues the request's trace, under the request's span
        assertEquals(request.trace().context().traceId(), reply.trace().context().traceId());
        assertEquals(Optional.of(request.trace().context().spanId()), reply.trace().context().parentSpanId());
        assertEquals(DeliveryState.REPLIED, store.state(request.id()));
        assertEquals(List.of(new AuditEntry(MemoryHub.START, "b1", "reply", "a1", AuditEntry.Decision.ALLOW,
                "reply to " + request.id(), Optional.of(reply.id()), version)), store.audit("reply"));
    }

    @Test
    void aReplyFollowsTheThreadOfItsRequest() {
        Payload threaded = new Payload(Optional.of("q"), Optional.empty(), Optional.empty(), Optional.of("t-9"),
                Optional.empty(), Map.of());
        Envelope request = router.send(as("a1"), send("a2", "message", threaded)).envelope();
        assertEquals(Optional.of("t-9"), router.reply(as("a2"), request.id(), text("a")).envelope().threadId());
    }

    @Test
    void aReplyToAGoneSenderIsAuditedAndNotFound() {
        Envelope request = router.send(as("a1"), send("a2", "message", text("question"))).envelope();
        hub.registry.delete(MemoryHub.ADMIN, NodeId.of("a1"));

        String version = hub.nextVersion();
        ParleyException e = assertThrows(ParleyException.class,
                () -> router.reply(as("a2"), request.id(), text("answer")));
        assertEquals(ErrorCode.NODE_NOT_FOUND, e.code());
        assertEquals(List.of(new AuditEntry(MemoryHub.START, "a2", "reply", "a1", AuditEntry.Decision.DENY,
                "original sender no longer exists", Optional.empty(), version)), store.audit("reply"));
        assertEquals(ErrorCode.MESSAGE_NOT_FOUND, assertThrows(ParleyException.class,
                () -> router.reply(as("a2"), "no-such-id", text("answer"))).code());
    }

    private static SendRequest send(String to, String kind, Payload payload) {
        return new SendRequest(NodeId.of(to), kind, payload, Optional.empty(), Optional.empty());
    }
}
