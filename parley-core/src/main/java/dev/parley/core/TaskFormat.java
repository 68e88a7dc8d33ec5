package dev.parley.core;

import java.util.Optional;

/**
 * How a task is written into the {@code data} of the envelopes that carry it. The wire
 * format belongs to the server, so the core asks for it rather than encoding JSON itself.
 */
public interface TaskFormat {
    /** The data of the {@code task} envelope the assignee receives: {@code taskId}, {@code title}, {@code input}. */
    JsonText assignment(Task task);

    /** The data of every later change: the task as {@code GET /v1/tasks/{id}} shows it. */
    JsonText view(Task task);

    /**
     * The task a {@code task} envelope hands over, as submitted (its parties the envelope's,
     * submitted when it was created); empty when its data is not an {@link #assignment}.
     */
    Optional<Task> assigned(Envelope assignment);

    /** The task a change's data shows; empty when it is not a {@link #view}. */
    Optional<Task> viewed(JsonText view);

    /**
     * The input of a {@code skill_distribution} task: {@code type}, {@code capabilityId}, the
     * delegation skill ({@code ref}, {@code version}), the contract and the ETA.
     */
    JsonText distribution(Capability capability);
}
