package dev.parley.core;

import java.util.Locale;

/** Where a delegated task stands: {@code submitted → accepted → working → completed | failed | canceled}. */
public enum TaskState {
    SUBMITTED, ACCEPTED, WORKING, COMPLETED, FAILED, CANCELED;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static TaskState parse(String wire) {
        for (TaskState state : values()) {
            if (state.wire().equals(wire)) {
                return state;
            }
        }
        throw new ParleyException(ErrorCode.INVALID_REQUEST,
                "state must be one of submitted, accepted, working, completed, failed, canceled");
    }

    public boolean terminal() {
        return this == COMPLETED || this == FAILED || this == CANCELED;
    }

    /** The task state machine; anything not listed is {@code invalid_transition}. */
    public TaskState on(TaskEvent event) {
        TaskState next = switch (event) {
            case TaskEvent.Accept a -> this == SUBMITTED ? ACCEPTED : null;
            case TaskEvent.Update u -> this == ACCEPTED || this == WORKING ? WORKING : null;
            case TaskEvent.Complete c -> this == ACCEPTED || this == WORKING ? COMPLETED : null;
            case TaskEvent.Fail f -> terminal() ? null : FAILED;
            case TaskEvent.Cancel c -> terminal() ? null : CANCELED;
        };
        if (next == null) {
            throw new ParleyException(ErrorCode.INVALID_TRANSITION,
                    "a task in state " + wire() + " cannot take " + event.name());
        }
        return next;
    }
}
