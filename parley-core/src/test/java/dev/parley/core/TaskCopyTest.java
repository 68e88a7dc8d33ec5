package dev.parley.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A task's copy on the other party's gateway follows each move by the same state machine, at this gateway's time. */
class TaskCopyTest {
    private static final Instant T0 = Instant.parse("2026-11-24T10:00:00Z");
    private static final Instant HERE = T0.plusSeconds(5);

    @Test
    void aMoveIsTakenAsTheStateMachineAllowsItAtThisGatewaysTime() {
        Task submitted = Task.submitted("t1", NodeId.of("lead"), NodeId.of("worker"), "review", Optional.empty(),
                false, T0);
        Task accepted = new TaskCopy.Moved(new TaskEvent.Accept(Optional.of(60L)), HERE).applyTo(submitted)
                .orElseThrow();
        assertEquals(List.of(TaskState.ACCEPTED, Optional.of(60L), HERE),
                List.of(accepted.state(), accepted.etaSeconds(), accepted.updatedAt()));
        Task canceled = new TaskCopy.Moved(new TaskEvent.Cancel("not needed"), HERE).applyTo(accepted).orElseThrow();
        assertEquals(List.of(TaskState.CANCELED, Optional.of("not needed")), List.of(canceled.state(), canceled.reason()));
    }

    @Test
    void aMoveTheStateMachineRefusesIsNotTaken() {
        Task submitted = Task.submitted("t1", NodeId.of("lead"), NodeId.of("worker"), "review", Optional.empty(),
                false, T0);
        assertEquals(Optional.empty(), new TaskCopy.Moved(new TaskEvent.Complete(Optional.empty(), List.of()), HERE)
                .applyTo(submitted), "complete before accept, as locally");
        Task canceled = submitted.after(new TaskEvent.Cancel("stop"), T0.plusSeconds(1));
        assertEquals(Optional.empty(), new TaskCopy.Moved(new TaskEvent.Fail("gave up"), HERE).applyTo(canceled),
                "a finished copy stays as it finished");
    }
}
