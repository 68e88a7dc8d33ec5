package dev.parley.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A task's copy on the other party's gateway follows each move by the state machine, and the
 * one race (the creator's cancel crossing the assignee's moves) ends alike on both copies.
 */
class TaskCopyTest {
    private static final Instant T0 = Instant.parse("2026-11-24T10:00:00Z");

    @Test
    void aMoveIsTakenAsTheStateMachineAllowsIt() {
        Task submitted = task(TaskState.SUBMITTED, T0);
        Task accepted = moved(new TaskEvent.Accept(Optional.of(60L)), submitted).applyTo(submitted).orElseThrow();
        assertEquals(List.of(TaskState.ACCEPTED, Optional.of(60L), T0.plusSeconds(1)),
                List.of(accepted.state(), accepted.etaSeconds(), accepted.updatedAt()));
        Task canceled = moved(new TaskEvent.Cancel("not needed"), accepted).applyTo(accepted).orElseThrow();
        assertEquals(List.of(TaskState.CANCELED, Optional.of("not needed")), List.of(canceled.state(), canceled.reason()));
        assertEquals(Optional.empty(), moved(new TaskEvent.Complete(Optional.empty(), List.of()), submitted)
                .applyTo(submitted), "complete before accept is refused as it is locally");
    }

    @Test
    void aCancelCrossingTheAssigneesCompletionEndsCompletedOnBothCopies() {
        Task working = task(TaskState.WORKING, T0);
        TaskEvent.Complete complete = new TaskEvent.Complete(Optional.of(new JsonText("{\"ok\":true}")),
                List.of(new TaskEvent.Artifact("https://example.com/r", "text/plain")));
        Task completedOnAssignee = working.after(complete, T0.plusSeconds(1));
        Task canceledOnCreator = working.after(new TaskEvent.Cancel("late"), T0.plusSeconds(2));

        // On the creator's gateway the completion replaces the cancel it crossed.
        Task creatorCopy = new TaskCopy.Moved(complete, completedOnAssignee).applyTo(canceledOnCreator).orElseThrow();
        assertEquals(completedOnAssignee, creatorCopy);
        // On the assignee's gateway the cancel finds a finished task and is not taken.
        assertEquals(Optional.empty(), new TaskCopy.Moved(new TaskEvent.Cancel("late"), canceledOnCreator)
                .applyTo(completedOnAssignee));
    }

    @Test
    void anUpdateCrossingACancelIsNotTakenAndTheCancelIs() {
        Task accepted = task(TaskState.ACCEPTED, T0);
        TaskEvent.Update update = new TaskEvent.Update(Optional.of(new JsonText("{\"pct\":50}")));
        Task updatedOnAssignee = accepted.after(update, T0.plusSeconds(1));
        Task canceledOnCreator = accepted.after(new TaskEvent.Cancel("stop"), T0.plusSeconds(2));
        assertEquals(Optional.empty(), new TaskCopy.Moved(update, updatedOnAssignee).applyTo(canceledOnCreator));
        assertEquals(TaskState.CANCELED, new TaskCopy.Moved(new TaskEvent.Cancel("stop"), canceledOnCreator)
                .applyTo(updatedOnAssignee).orElseThrow().state());
    }

    /** The move {@code event} as the other gateway told it: its copy of {@code before}, moved a second later. */
    private static TaskCopy.Moved moved(TaskEvent event, Task before) {
        Task after = new Task(before.id(), before.creator(), before.assignee(), before.title(), before.input(),
                TaskState.WORKING, false, event instanceof TaskEvent.Accept a ? a.etaSeconds() : Optional.empty(),
                Optional.empty(), Optional.empty(), List.of(), event instanceof TaskEvent.Cancel c
                ? Optional.of(c.reason()) : Optional.empty(), before.createdAt(), before.updatedAt().plusSeconds(1));
        return new TaskCopy.Moved(event, after);
    }

    private static Task task(TaskState state, Instant at) {
        return new Task("t1", NodeId.of("lead"), NodeId.of("worker"), "review", Optional.empty(), state, false,
                Optional.empty(), Optional.empty(), Optional.empty(), List.of(), Optional.empty(), at, at);
    }
}
