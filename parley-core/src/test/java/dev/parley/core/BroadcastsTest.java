package dev.parley.core;

import dev.parley.core.TestRules.Rule;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.parley.core.MemoryHub.as;
import static dev.parley.core.MemoryHub.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Who a broadcast reaches: the admin anyone, a node its own groups; rules may refuse, never widen. */
class BroadcastsTest {
    private static final BroadcastFilter EVERYONE = new BroadcastFilter(Optional.empty(), Map.of(), Optional.empty());

    private final MemoryHub hub = new MemoryHub();
    private final MemoryStore store = hub.store;
    private final Broadcasts broadcasts = new Broadcasts(hub.graph, hub.policy, PayloadSchemas.NONE, store, store,
            hub.clock, hub.ids);

    /** lead-a → a1 (→ a1x), a2 (role=coder); lead-b → b1. */
    @BeforeEach
    void lineage() {
        hub.node("lead-a", null);
        hub.node("a1", "lead-a");
        hub.node("a2", "lead-a", Map.of("role", "coder"));
        hub.node("a1x", "a1");
        hub.node("lead-b", null);
        hub.node("b1", "lead-b");
    }

    @Test
    void theAdminReachesEveryNodeAsTheHub() {
        Publication publication = broadcasts.broadcast(MemoryHub.ADMIN, EVERYONE, text("maintenance"));
        assertEquals(6, publication.delivered());
        Envelope one = store.inbox(NodeId.of("b1")).getFirst();
        assertEquals(NodeId.HUB, one.from());
        assertEquals(Broadcasts.KIND, one.kind());
        assertEquals(Route.BROADCAST, one.trace().route());
        assertEquals("admin broadcast (publication " + publication.id() + ")", store.audit("broadcast").getFirst()
                .reason());
    }

    @Test
    void aNodeReachesTheGroupItBelongsToAndTheGroupItLeadsButNotItself() {
        Publication publication = broadcasts.broadcast(as("a1"), EVERYONE, text("hello"));
        assertEquals(List.of("a1x", "a2", "lead-a"), recipients());
        assertEquals(3, publication.delivered());
        assertEquals(List.of(), store.inbox(NodeId.of("a1")));
    }

    @Test
    void aFilterNarrowsByGroupLabelsAndKind() {
        broadcasts.broadcast(as("a1"), new BroadcastFilter(Optional.of(NodeId.of("a1")), Map.of(), Optional.empty()),
                text("to my children"));
        assertEquals(List.of("a1x"), recipients());
        broadcasts.broadcast(MemoryHub.ADMIN, new BroadcastFilter(Optional.empty(), Map.of("role", "coder"),
                Optional.of(NodeKind.EXTERNAL)), text("coders"));
        assertEquals(List.of("a1x", "a2"), recipients());
    }

    @Test
    void aNodeBroadcastingToAnotherGroupIsRefusedAndAudited() {
        String version = hub.nextVersion();
        ParleyException e = assertThrows(ParleyException.class, () -> broadcasts.broadcast(as("a1"),
                new BroadcastFilter(Optional.of(NodeId.of("lead-b")), Map.of(), Optional.empty()), text("hi")));
        assertEquals(ErrorCode.FORBIDDEN, e.code());
        assertEquals(List.of(new AuditEntry(MemoryHub.START, "a1", "broadcast", "group:lead-b", AuditEntry.Decision.DENY,
                e.getMessage(), Optional.empty(), version)), store.audit("broadcast"));
        assertEquals(List.of(), store.envelopes());
    }

    @Test
    void denyRulesRefuseRecipientsAndAllowRulesDoNotWiden() {
        hub.rules.add(new Rule("hub-spares-b1", PolicyRules.Effect.DENY, in -> in.sender().kind().equals("hub")
                && in.target().id().equals("b1")));
        hub.rules.add(new Rule("let-all", PolicyRules.Effect.ALLOW, in -> true));

        broadcasts.broadcast(MemoryHub.ADMIN, EVERYONE, text("maintenance"));
        assertEquals(List.of(), store.inbox(NodeId.of("b1")));
        AuditEntry refused = store.audit("broadcast").getFirst();
        assertEquals("b1", refused.target());
        assertEquals(Optional.of("hub-spares-b1"), refused.rule());

        broadcasts.broadcast(as("a1x"), EVERYONE, text("up"));
        assertEquals(List.of(), store.inbox(NodeId.of("lead-b")).stream().filter(e -> e.from().equals(NodeId.of("a1x")))
                .toList(), "an allow rule does not widen a broadcast beyond its group");
    }

    /** The nodes that received an envelope, sorted. */
    private List<String> recipients() {
        return store.envelopes().stream().map(e -> e.to().value()).distinct().sorted().toList();
    }
}
