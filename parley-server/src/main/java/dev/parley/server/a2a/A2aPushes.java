package dev.parley.server.a2a;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.core.Envelope;
import dev.parley.core.IdGenerator;
import dev.parley.core.NodeId;
import dev.parley.core.ParleyException;
import dev.parley.core.PolicyRules;
import dev.parley.core.Route;
import dev.parley.core.Task;
import dev.parley.core.TaskTap;
import dev.parley.core.TaskWebhook;
import dev.parley.core.TaskWebhooks;
import dev.parley.core.Trace;
import dev.parley.core.Webhook;
import dev.parley.server.delivery.PushForm;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A2A push-notification configs, delivered by the hub's webhook machinery. A config is a
 * {@link TaskWebhook}: its URL becomes the delivery policy of a relay address
 * ({@code a2a-push.<hash>}, no node), and on every change of the task a push envelope from
 * the config's owner to that relay commits in the same transaction as the change (this class
 * is the {@link TaskTap}). From there the dispatcher pushes it like any webhook envelope:
 * scheduled durably, retried with the owner's retry policy, signed with
 * {@code Parley-Signature}, and dead-lettered with a {@code dead_letter} notice to the owner.
 * The body is the A2A payload (section 4.3.3): a v1.0 {@code StreamResponse} holding the task,
 * or the v0.3 task; the config's token travels as {@code X-A2A-Notification-Token} and its
 * authentication as {@code Authorization}.
 */
public final class A2aPushes implements TaskTap, PushForm {
    static final String KIND = "a2a_push";
    static final String TOKEN_HEADER = "X-A2A-Notification-Token";
    private static final String RELAY_PREFIX = "a2a-push.";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final TaskWebhooks webhooks;
    private final PolicyRules rules;
    private final IdGenerator ids;
    private final InstantSource clock;
    private final Map<String, List<TaskWebhook>> byTask = new ConcurrentHashMap<>();
    private final Map<NodeId, TaskWebhook> byRelay = new ConcurrentHashMap<>();

    public A2aPushes(TaskWebhooks webhooks, PolicyRules rules, IdGenerator ids, InstantSource clock) {
        this.webhooks = webhooks;
        this.rules = rules;
        this.ids = ids;
        this.clock = clock;
        webhooks.all().forEach(this::remember);
    }

    /** Creates (or replaces, same id) the config of {@code owner} for {@code task}. */
    TaskWebhook create(NodeId owner, Task task, A2aWire.PushConfig config, A2aVersion version) {
        String id = config.id().orElseGet(() -> UUID.randomUUID().toString());
        NodeId relay = relay(task.id(), id);
        String secret = config.token().filter(t -> t.length() >= 16 && t.length() <= 256).orElseGet(A2aPushes::secret);
        Webhook webhook;
        try {
            webhook = Webhook.of(config.url(), secret);
        } catch (ParleyException e) {
            throw A2aError.invalidParams("push notification url: " + e.getMessage());
        }
        TaskWebhook stored = new TaskWebhook(task.id(), id, owner, relay, webhook.url().toString(), config.token(),
                config.scheme(), config.credentials(), version.wire, clock.instant());
        webhooks.put(stored, webhook);
        forget(task.id(), id);
        remember(stored);
        return stored;
    }

    Optional<TaskWebhook> get(String taskId, String id) {
        return byTask.getOrDefault(taskId, List.of()).stream().filter(w -> w.id().equals(id)).findFirst();
    }

    List<TaskWebhook> list(String taskId) {
        return List.copyOf(byTask.getOrDefault(taskId, List.of()));
    }

    /** Deletes a config; deleting one that does not exist is no error (the operation is idempotent). */
    void delete(NodeId caller, String taskId, String id) {
        Optional<TaskWebhook> existing = get(taskId, id);
        if (existing.isEmpty()) {
            return;
        }
        webhooks.remove(caller, existing.get());
        forget(taskId, id);
    }

    /** The push envelopes owed to a task change: one per config of the task. Runs in the change's transaction. */
    @Override
    public List<Envelope> after(Task task, Envelope notice) {
        List<TaskWebhook> configs = byTask.get(task.id());
        if (configs == null || configs.isEmpty()) {
            return List.of();
        }
        return configs.stream().map(w -> {
            A2aVersion version = "1.0".equals(w.format()) ? A2aVersion.V1_0 : A2aVersion.V0_3;
            ObjectNode body = A2aWire.streamItem("task", A2aWire.task(task, version, Optional.of(0), true), version);
            Map<String, String> meta = new LinkedHashMap<>();
            meta.put("a2aPushConfig", w.id());
            meta.put("a2aVersion", version.wire);
            return new Envelope(ids.next(), 0, w.owner(), w.relay(), KIND,
                    Optional.of("A2A push: task " + task.id() + " " + task.state().wire()),
                    Optional.of(A2aWire.jsonText(body)), Optional.of(task.id()), Optional.empty(), Optional.empty(),
                    Optional.empty(), meta, task.updatedAt(), new Trace(1, Route.TASK, rules.version()));
        }).toList();
    }

    /** The wire form of a push envelope: the A2A payload, its media type, the token and the credentials. */
    @Override
    public Optional<Outbound> of(Envelope envelope) {
        if (!KIND.equals(envelope.kind()) || envelope.data().isEmpty()) {
            return Optional.empty();
        }
        TaskWebhook webhook = byRelay.get(envelope.to());
        Map<String, String> headers = new LinkedHashMap<>();
        if (webhook != null) {
            webhook.token().ifPresent(t -> headers.put(TOKEN_HEADER, t));
            webhook.authScheme().ifPresent(s -> headers.put("Authorization",
                    s + webhook.authCredentials().map(c -> " " + c).orElse("")));
        }
        boolean v1 = "1.0".equals(envelope.meta().get("a2aVersion"));
        headers.put(A2aVersion.HEADER, v1 ? "1.0" : "0.3");
        return Optional.of(new Outbound(envelope.data().get().json().getBytes(StandardCharsets.UTF_8),
                v1 ? A2aWire.A2A_JSON : "application/json", headers));
    }

    private void remember(TaskWebhook webhook) {
        byTask.computeIfAbsent(webhook.taskId(), id -> new CopyOnWriteArrayList<>()).add(webhook);
        byRelay.put(webhook.relay(), webhook);
    }

    private void forget(String taskId, String id) {
        List<TaskWebhook> configs = byTask.get(taskId);
        if (configs != null) {
            configs.removeIf(w -> {
                if (w.id().equals(id)) {
                    byRelay.remove(w.relay());
                    return true;
                }
                return false;
            });
        }
    }

    /** The relay address of one config: stable, and no node id anyone would pick. */
    static NodeId relay(String taskId, String id) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest((taskId + "/" + id).getBytes(StandardCharsets.UTF_8));
            return NodeId.of(RELAY_PREFIX + HexFormat.of().formatHex(hash).substring(0, 40));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    private static String secret() {
        byte[] bytes = new byte[24];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
