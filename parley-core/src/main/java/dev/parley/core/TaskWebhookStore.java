package dev.parley.core;

import java.util.List;
import java.util.Optional;

/** The webhooks that follow tasks, durable across restarts. */
public interface TaskWebhookStore {
    /** Creates or replaces the webhook {@code (taskId, id)}. */
    void put(TaskWebhook webhook, AuditEntry audit);

    /** Removes it; true when it existed. */
    boolean remove(String taskId, String id, AuditEntry audit);

    Optional<TaskWebhook> webhook(String taskId, String id);

    List<TaskWebhook> webhooks(String taskId);

    /** Every webhook, for loading the hub's view at start. */
    List<TaskWebhook> all();
}
