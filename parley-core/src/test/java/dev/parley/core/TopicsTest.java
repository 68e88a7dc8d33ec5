package dev.parley.core;

import dev.parley.core.TestRules.Rule;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import static dev.parley.core.MemoryHub.as;
import static dev.parley.core.MemoryHub.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Topic subscriptions and the fan-out of one event to the subscribers the policy lets it reach. */
class TopicsTest {
    private static final TopicName NEWS = TopicName.of("news");
    /** Events need data. */
    private static final PayloadSchemas SCHEMAS = (kind, data) -> {
        if (kind.equals(Topics.EVENT_KIND) && data.isEmpty()) {
            throw new ParleyException(ErrorCode.SCHEMA_VIOLATION, "data is required");
        }
    };

    private final MemoryHub hub = new MemoryHub();
    private final MemoryStore store = hub.store;
    private final Topics topics = new Topics(hub.graph, hub.policy, PayloadSchemas.NONE, store, hub.clock, hub.ids);

    /** lead-a → a1, a2, a3; lead-b → b1. */
    @BeforeEach
    void lineage() {
        hub.node("lead-a", null);
        hub.node("a1", "lead-a");
        hub.node("a2", "lead-a");
        hub.node("a3", "lead-a");
        hub.node("lead-b", null);
        hub.node("b1", "lead-b");
    }

    @Test
    void aNodeSubscribesItselfOnceAndOnlyTheAdminListsSubscribers() {
        String version = hub.nextVersion(); // the subscription is audited under the policy version in force
        Subscribed first = topics.subscribe(as("a1"), NEWS);
        Subscribed again = topics.subscribe(as("a1"), NEWS);
        assertTrue(first.created());
        assertFalse(again.created());
        assertEquals(first.subscription(), again.subscription());
        assertEquals(List.of(new AuditEntry(MemoryHub.START, "a1", "topic.subscribe", "topic:news",
                AuditEntry.Decision.ALLOW, "subscribed", Optional.empty(), version)),
                store.audit("topic.subscribe"));

        assertEquals(List.of(first.subscription()), topics.subscribers(MemoryHub.ADMIN, NEWS));
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(ParleyException.class,
                () -> topics.subscribers(as("a1"), NEWS)).code());
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(ParleyException.class,
                () -> topics.subscribe(MemoryHub.ADMIN, NEWS)).code());

        topics.unsubscribe(as("a1"), NEWS);
        assertEquals(List.of(), topics.subscribers(MemoryHub.ADMIN, NEWS));
        assertEquals(ErrorCode.NOT_SUBSCRIBED, assertThrows(ParleyException.class,
                () -> topics.unsubscribe(as("a1"), NEWS)).code());
    }

    @Test
    void anEventReachesTheSubscribersThePolicyAllowsInOneCommitUnderOneVersion() {
        for (String node : List.of("a1", "a2", "a3", "b1")) {
            topics.subscribe(as(node), NEWS);
        }
        hub.rules.add(new Rule("quiet-a3", PolicyRules.Effect.DENY, in -> in.target().id().equals("a3")));
        String version = hub.nextVersion();
        int commits = store.commits();

        Publication publication = topics.publish(as("a1"), NEWS, text("launch"));

        assertEquals(1, publication.delivered(), "a2 only: not the publisher, not a3 (rule), not b1 (ACL)");
        assertEquals(commits + 1, store.commits(), "one transaction");
        Envelope event = store.inbox(NodeId.of("a2")).getFirst();
        assertEquals(Topics.EVENT_KIND, event.kind());
        assertEquals(Optional.of("news"), event.topic());
        assertEquals(Optional.of(publication.id()), event.corrId());
        assertEquals(new Trace(1, Route.TOPIC, version, Optional.empty(), event.trace().context()), event.trace());
        for (String none : List.of("a1", "a3", "b1")) {
            assertEquals(List.of(), store.inbox(NodeId.of(none)), none);
        }

        List<AuditEntry> audit = store.audit("topic.publish");
        assertEquals(Set.of(version), audit.stream().map(AuditEntry::policyVersion).collect(Collectors.toSet()),
                "every decision of one publication under one policy version");
        assertEquals(List.of("a3", "b1", "a2", "topic:news"), audit.stream().map(AuditEntry::target).toList(),
                "refusals, allowances, then the publication");
        AuditEntry ruled = audit.get(0);
        assertEquals(AuditEntry.Decision.DENY, ruled.decision());
        assertEquals(Optional.of("quiet-a3"), ruled.rule());
        AuditEntry acl = audit.get(1);
        assertEquals(AuditEntry.Decision.DENY, acl.decision());
        assertTrue(acl.reason().endsWith(", and no active grant to topic:news"), acl.reason());
        assertEquals(new AuditEntry(MemoryHub.START, "a1", "topic.publish", "a2", AuditEntry.Decision.ALLOW,
                "intra_group (publication " + publication.id() + ")", Optional.of(event.id()), version), audit.get(2));
        assertEquals("publication " + publication.id() + " to 1 inbox(es), 2 refused", audit.get(3).reason());
    }

    @Test
    void aGrantToTheTopicReachesEverySubscriberTheRulesDoNotRefuse() {
        topics.subscribe(as("b1"), NEWS);
        topics.subscribe(as("a2"), NEWS);
        Grant grant = hub.grant("a1", new GrantTarget.Topic(NEWS));

        Publication publication = topics.publish(as("a1"), NEWS, text("launch"));

        assertEquals(2, publication.delivered());
        Envelope event = store.inbox(NodeId.of("b1")).getFirst();
        assertEquals(Route.TOPIC, event.trace().route());
        assertEquals("grant " + grant.id() + " (publication " + publication.id() + ")",
                store.audit("topic.publish").stream().filter(e -> e.target().equals("b1")).findFirst().orElseThrow()
                        .reason());
    }

    @Test
    void deletedSubscribersArePassedOverAndAnEventCarriesNoMessageId() {
        topics.subscribe(as("a2"), NEWS);
        topics.subscribe(as("a3"), NEWS);
        hub.registry.delete(MemoryHub.ADMIN, NodeId.of("a3"));
        Payload keyed = new Payload(Optional.of("launch"), Optional.empty(), Optional.of("mine"), Optional.empty(),
                Optional.of("m-1"), Map.of());

        Publication publication = topics.publish(as("a1"), NEWS, keyed);

        assertEquals(1, publication.delivered());
        Envelope event = store.inbox(NodeId.of("a2")).getFirst();
        assertEquals(Optional.empty(), event.messageId(), "a messageId stays unique per sender");
        assertEquals(Optional.of(publication.id()), event.corrId());
        assertEquals(List.of("a2", "topic:news"), store.audit("topic.publish").stream().map(AuditEntry::target).toList());
    }

    @Test
    void anEventThatBreaksItsSchemaOrComesFromTheAdminWritesNothing() {
        Topics checked = new Topics(hub.graph, hub.policy, SCHEMAS, store, hub.clock, hub.ids);
        topics.subscribe(as("a2"), NEWS);
        assertEquals(ErrorCode.SCHEMA_VIOLATION, assertThrows(ParleyException.class,
                () -> checked.publish(as("a1"), NEWS, text("no data"))).code());
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(ParleyException.class,
                () -> topics.publish(MemoryHub.ADMIN, NEWS, text("hi"))).code());
        assertEquals(List.of(), store.envelopes());
        assertEquals(List.of(), store.audit("topic.publish"));
    }
}
