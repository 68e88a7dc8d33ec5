package dev.parley.core;

/**
 * How a task is written into the {@code data} of the envelopes that carry it. The wire
 * format belongs to the server, so the core asks for it rather than encoding JSON itself.
 */
public interface TaskFormat {
    /** The data of the {@code task} envelope the assignee receives: {@code taskId}, {@code title}, {@code input}. */
    JsonText assignment(Task task);

    /** The data of every later change: the task as {@code GET /v1/tasks/{id}} shows it. */
    JsonText view(Task task);
}
