package dev.parley.core;

import dev.parley.core.TestRules.Rule;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static dev.parley.core.MemoryHub.as;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Delegation: who may create, move and read a task, and the envelopes and audit entries each move writes. */
class TasksTest {
    /** The task's wire form, reduced to what these tests check. */
    private static final TaskFormat FORMAT = new TaskFormat() {
        @Override
        public JsonText assignment(Task task) {
            return new JsonText("{\"taskId\":\"" + task.id() + "\"}");
        }

        @Override
        public JsonText view(Task task) {
            return new JsonText("{\"taskId\":\"" + task.id() + "\",\"state\":\"" + task.state().wire() + "\"}");
        }

        @Override
        public Optional<Task> assigned(Envelope assignment) {
            return Optional.empty(); // read only by federation's arrivals
        }

        @Override
        public Optional<Task> viewed(JsonText view) {
            return Optional.empty();
        }

        @Override
        public JsonText distribution(Capability capability) {
            return new JsonText("{\"capabilityId\":\"" + capability.id() + "\"}");
        }
    };

    private final MemoryHub hub = new MemoryHub();
    private final MemoryStore store = hub.store;
    private final Tasks tasks = new Tasks(hub.graph, hub.policy, hub.registry, store, store, FORMAT, hub.clock, hub.ids,
            Tasks.Provisioning.NONE, Tasks.Routing.NONE);

    /** lead → w1, w2; other → o1. */
    @BeforeEach
    void lineage() {
        hub.node("lead", null);
        hub.node("w1", "lead");
        hub.node("w2", "lead");
        hub.node("other", null);
        hub.node("o1", "other");
    }

    @Test
    void aTaskReachesItsAssigneeWithTheDecisionAudited() {
        String version = hub.nextVersion();
        CreatedTask created = tasks.create(as("lead"), delegate("w1", "review the patch"));

        Task task = created.task();
        assertEquals(TaskState.SUBMITTED, task.state());
        assertFalse(created.duplicate());
        assertEquals(Optional.empty(), created.assigneeToken());
        Envelope assignment = store.inbox(NodeId.of("w1")).getFirst();
        assertEquals(Tasks.KIND, assignment.kind());
        assertEquals(NodeId.of("lead"), assignment.from());
        assertEquals(Optional.of("review the patch"), assignment.text());
        assertEquals(Optional.of(FORMAT.assignment(task)), assignment.data());
        assertEquals(Optional.of(task.id()), assignment.corrId());
        assertEquals(new Trace(1, Route.TASK, version, Optional.empty(), assignment.trace().context()), assignment.trace());
        assertEquals(List.of(new AuditEntry(MemoryHub.START, "lead", "task.create", "w1", AuditEntry.Decision.ALLOW,
                "task " + task.id() + " (intra_group)", Optional.of(assignment.id()), version)), store.audit("task.create"));
    }

    @Test
    void aTaskToANodeOutOfReachOrToNoNodeIsRefusedAndAudited() {
        hub.rules.add(new Rule("no-chores", PolicyRules.Effect.DENY, in -> in.envelope().kind().equals(Tasks.KIND)
                && in.envelope().textSize() > 20));
        ParleyException acl = assertThrows(ParleyException.class, () -> tasks.create(as("lead"), delegate("o1", "x")));
        assertEquals(ErrorCode.ACL_DENIED, acl.code());
        ParleyException ruled = assertThrows(ParleyException.class,
                () -> tasks.create(as("lead"), delegate("w1", "a title longer than twenty bytes")));
        assertEquals("no-chores", ruled.details().get("rule"));
        ParleyException missing = assertThrows(ParleyException.class,
                () -> tasks.create(as("lead"), delegate("ghost", "x")));
        assertEquals(ErrorCode.NODE_NOT_FOUND, missing.code());

        List<AuditEntry> denials = store.audit("task.create");
        assertEquals(List.of("o1", "w1", "ghost"), denials.stream().map(AuditEntry::target).toList());
        assertTrue(denials.stream().allMatch(e -> e.decision() == AuditEntry.Decision.DENY));
        assertEquals(Optional.of("no-chores"), denials.get(1).rule());
        assertEquals(List.of(), tasks.list(MemoryHub.ADMIN, query()));
        assertEquals(List.of(), store.envelopes());
    }

    @Test
    void theAdminCreatesNoTasksAndARepeatedMessageIdAnswersTheFirstTask() {
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(ParleyException.class,
                () -> tasks.create(MemoryHub.ADMIN, delegate("w1", "x"))).code());

        NewTask keyed = new NewTask(new NewTask.Assignee.Existing(NodeId.of("w1")), "once", Optional.empty(), false,
                Optional.of("m-1"));
        CreatedTask first = tasks.create(as("lead"), keyed);
        CreatedTask again = tasks.create(as("lead"), keyed);
        assertTrue(again.duplicate());
        assertEquals(first.task(), again.task());
        assertEquals(1, store.inbox(NodeId.of("w1")).size());
    }

    @Test
    void theAssigneeMovesTheTaskAndTheCreatorHearsOfEveryMove() {
        Task task = tasks.create(as("lead"), delegate("w1", "build")).task();
        hub.advance(Duration.ofSeconds(5));

        String version = hub.nextVersion();
        Task accepted = tasks.apply(as("w1"), task.id(), new TaskEvent.Accept(Optional.of(60L)));
        assertEquals(TaskState.ACCEPTED, accepted.state());
        Envelope notice = store.inbox(NodeId.of("lead")).getFirst();
        assertEquals("task_accept", notice.kind());
        assertEquals(NodeId.of("w1"), notice.from());
        assertEquals(Optional.of(FORMAT.view(accepted)), notice.data());
        assertEquals(Optional.of(task.id()), notice.corrId());
        assertEquals(new Trace(1, Route.TASK, version, Optional.empty(), notice.trace().context()), notice.trace());
        assertEquals(List.of(new AuditEntry(MemoryHub.START.plusSeconds(5), "w1", "task.accept", "lead",
                AuditEntry.Decision.ALLOW, "task " + task.id() + " submitted -> accepted", Optional.of(notice.id()),
                version)), store.audit("task.accept"));

        Task completed = tasks.apply(as("w1"), task.id(), new TaskEvent.Complete(Optional.empty(),
                List.of(new TaskEvent.Artifact("https://example.com/build.tgz", "application/gzip"))));
        assertEquals(TaskState.COMPLETED, completed.state());
        assertEquals(List.of("task_accept", "task_complete"), store.inbox(NodeId.of("lead")).stream()
                .map(Envelope::kind).toList());
    }

    @Test
    void onlyTheAssigneeMovesOnlyTheCreatorCancelsAndIllegalMovesWriteNothing() {
        Task task = tasks.create(as("lead"), delegate("w1", "build")).task();
        for (Principal wrong : List.of(as("lead"), MemoryHub.ADMIN)) {
            assertEquals(ErrorCode.FORBIDDEN, assertThrows(ParleyException.class,
                    () -> tasks.apply(wrong, task.id(), new TaskEvent.Accept(Optional.empty()))).code(), wrong.name());
        }
        // to a node that is no party the task does not exist
        assertEquals(ErrorCode.TASK_NOT_FOUND, assertThrows(ParleyException.class,
                () -> tasks.apply(as("w2"), task.id(), new TaskEvent.Accept(Optional.empty()))).code());
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(ParleyException.class,
                () -> tasks.apply(as("w1"), task.id(), new TaskEvent.Cancel("no"))).code());
        int written = store.envelopes().size();
        assertEquals(ErrorCode.INVALID_TRANSITION, assertThrows(ParleyException.class,
                () -> tasks.apply(as("w1"), task.id(), new TaskEvent.Complete(Optional.empty(), List.of()))).code());
        assertEquals(ErrorCode.INVALID_REQUEST, assertThrows(ParleyException.class,
                () -> tasks.apply(as("w1"), task.id(), new TaskEvent.Complete(Optional.empty(),
                        List.of(new TaskEvent.Artifact("build.tgz", "application/gzip"))))).code());
        assertEquals(written, store.envelopes().size());
        assertEquals(ErrorCode.TASK_NOT_FOUND, assertThrows(ParleyException.class,
                () -> tasks.apply(as("w1"), "no-such-task", new TaskEvent.Accept(Optional.empty()))).code());

        Task canceled = tasks.apply(as("lead"), task.id(), new TaskEvent.Cancel("changed my mind"));
        assertEquals(TaskState.CANCELED, canceled.state());
        Envelope notice = store.inbox(NodeId.of("w1")).getLast();
        assertEquals("task_canceled", notice.kind());
        assertEquals(NodeId.of("lead"), notice.from());
        assertEquals("w1", store.audit("task.cancel").getFirst().target());
    }

    @Test
    void aSpawnedEphemeralAssigneeIsTheCreatorsChildAndGoesWhenTheTaskEnds() {
        NewTask spawn = new NewTask(new NewTask.Assignee.Spawned(NodeId.of("helper"), NodeKind.MANAGED,
                Map.of("role", "helper")), "one-off", Optional.empty(), true);
        CreatedTask created = tasks.create(as("w1"), spawn);

        Node helper = hub.graph.node(NodeId.of("helper")).orElseThrow();
        assertEquals(Optional.of(NodeId.of("w1")), helper.parent());
        assertTrue(created.assigneeToken().isPresent());
        assertEquals(Optional.of(new Principal.Caller(NodeId.of("helper"))),
                hub.tokens.authenticate(created.assigneeToken().get()));
        Task task = created.task();
        assertEquals("task " + task.id() + " (spawned for the task)", store.audit("task.create").getFirst().reason());
        assertEquals(Route.TASK, store.inbox(NodeId.of("helper")).getFirst().trace().route());

        tasks.apply(as("helper"), task.id(), new TaskEvent.Fail("could not"));
        assertTrue(hub.graph.node(NodeId.of("helper")).isEmpty());
        assertEquals(List.of(NodeId.of("helper")), store.deletedNodes());
        assertEquals("task_failed", store.inbox(NodeId.of("w1")).getLast().kind());
    }

    @Test
    void onlyThePartiesAndTheAdminReadATask() {
        Task task = tasks.create(as("lead"), delegate("w1", "build")).task();
        tasks.create(as("w2"), delegate("w1", "other"));
        assertEquals(task, tasks.show(as("lead"), task.id()));
        assertEquals(task, tasks.show(as("w1"), task.id()));
        assertEquals(task, tasks.show(MemoryHub.ADMIN, task.id()));
        assertEquals(ErrorCode.TASK_NOT_FOUND, assertThrows(ParleyException.class,
                () -> tasks.show(as("w2"), task.id())).code(), "to a node that is no party the task does not exist");
        assertEquals(List.of(task), tasks.list(as("lead"), query()));
        assertEquals(2, tasks.list(MemoryHub.ADMIN, query()).size());
    }

    private static NewTask delegate(String assignee, String title) {
        return new NewTask(new NewTask.Assignee.Existing(NodeId.of(assignee)), title, Optional.empty(), false);
    }

    private static TaskQuery query() {
        return new TaskQuery(Optional.empty(), Optional.empty(), Optional.empty(), 100);
    }
}
