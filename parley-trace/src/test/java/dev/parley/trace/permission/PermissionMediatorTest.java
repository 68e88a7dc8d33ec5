package dev.parley.trace.permission;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.parley.core.AgentSpec;
import dev.parley.core.ToolKind;
import dev.parley.trace.TraceBuilder;
import dev.parley.trace.TraceEvent;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The deciders in order, the verdict words, and what a turn records. */
class PermissionMediatorTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final PermissionAsk BASH = new PermissionAsk("r1", "w1", "Bash", ToolKind.EXECUTE,
            JSON.createObjectNode().put("command", "rm -rf /tmp/x"));
    private static final Approvals SILENT = (ask, approver, timeout) -> Optional.empty();

    private static Decider ask(Answer answer) {
        return new Decider.AskNode("lead", Duration.ofSeconds(1), (ask, approver, timeout) -> Optional.of(answer));
    }

    @Test
    void theBlocklistDeniesFirstWithPatterns() throws InterruptedException {
        Decision d = PermissionMediator.decide(BASH, List.of(
                new Decider.Blocklist(new AgentSpec.ToolBlocklist(List.of("Web*", "Ba*h"))),
                ask(new Answer(TextNode.valueOf("allow"), Optional.empty()))), Optional.empty());
        assertEquals(Decision.deny("blocklist", "the agent's tool blocklist names Bash"), d);
    }

    @Test
    void aRuleDecidesBeforeTheNodeIsAsked() throws InterruptedException {
        PermissionRules rules = a -> Optional.of(new PermissionRules.Ruling("no-rm", TraceEvent.Verdict.DENY));
        Decision d = PermissionMediator.decide(BASH, List.of(new Decider.Blocklist(new AgentSpec.ToolBlocklist(
                List.of("Write"))), new Decider.Rules(rules), ask(new Answer(null, Optional.of("allow")))),
                Optional.empty());
        assertEquals("policy:no-rm", d.decidedBy());
        assertEquals(TraceEvent.Verdict.DENY, d.verdict());
    }

    @Test
    void theNodesAnswerDecidesAndSilenceIsATimeout() throws InterruptedException {
        assertEquals(TraceEvent.Verdict.ALLOW, PermissionMediator.decide(BASH, List.of(new Decider.Rules(
                PermissionRules.NONE), ask(new Answer(null, Optional.of("Allow.")))), Optional.empty()).verdict());
        assertEquals(Decision.deny("node:lead", "lead answered neither allow nor deny"), PermissionMediator.decide(
                BASH, List.of(ask(new Answer(null, Optional.of("let me think")))), Optional.empty()));
        Decision silent = PermissionMediator.decide(BASH, List.of(new Decider.AskNode("lead", Duration.ofMillis(5),
                SILENT)), Optional.empty());
        assertEquals("timeout", silent.decidedBy());
        assertEquals(TraceEvent.Verdict.DENY, silent.verdict());
        assertEquals("nobody", PermissionMediator.decide(BASH, List.of(), Optional.empty()).decidedBy());
    }

    @Test
    void theVerdictWordsComeFromDataThenText() {
        assertEquals(Optional.of(TraceEvent.Verdict.DENY), new Answer(JSON.createObjectNode().put("behavior", "deny"),
                Optional.of("allow")).verdict());
        assertEquals(Optional.of(TraceEvent.Verdict.ALLOW), new Answer(TextNode.valueOf("ALLOW"), Optional.empty())
                .verdict());
        assertEquals(Optional.of(TraceEvent.Verdict.DENY), new Answer(null, Optional.of("deny — too risky")).verdict());
        assertEquals(Optional.empty(), new Answer(null, Optional.of("allowed?")).verdict());
    }

    @Test
    void theTurnRecordsTheRequestAndItsResponseNestedUnderIt() throws InterruptedException {
        List<TraceEvent> events = new ArrayList<>();
        TraceBuilder turn = new TraceBuilder(Clock.fixed(Instant.parse("2025-01-01T00:00:00Z"), ZoneOffset.UTC),
                events::add);
        PermissionMediator.decide(BASH, List.of(ask(new Answer(null, Optional.of("deny")))), Optional.of(turn));
        assertEquals(2, events.size());
        TraceEvent.PermissionRequest request = (TraceEvent.PermissionRequest) events.get(0);
        TraceEvent.PermissionResponse response = (TraceEvent.PermissionResponse) events.get(1);
        assertEquals("Bash", request.tool());
        assertEquals(ToolKind.EXECUTE, request.kind());
        assertEquals(Optional.of(request.id()), response.parentId());
        assertEquals("node:lead", response.decidedBy());

        Decider unreachable = new Decider.AskNode("x", Duration.ofSeconds(1), (a, approver, t) -> {
            throw new IllegalStateException("x is out of reach");
        });
        assertThrows(IllegalStateException.class, () -> PermissionMediator.decide(BASH, List.of(unreachable),
                Optional.of(turn)));
        assertEquals("refused", ((TraceEvent.PermissionResponse) events.getLast()).decidedBy());
    }
}
