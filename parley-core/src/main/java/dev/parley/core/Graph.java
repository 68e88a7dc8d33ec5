package dev.parley.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;

/**
 * The live message graph held in memory: nodes, lineage and grants. It mirrors what the
 * store has committed; callers update it only after a commit succeeds. Retired ids (of
 * deleted nodes) are remembered so an id is never reused for a different inbox.
 */
public final class Graph {
    private final Map<NodeId, Node> nodes = new ConcurrentHashMap<>();
    /** Each parent's children, kept in id order so that a group is read without sorting it. */
    private final Map<NodeId, Set<NodeId>> children = new ConcurrentHashMap<>();
    /**
     * Each group's member ids as rules read them ({@link RuleInput.Party#group()}), keyed by its
     * leader: made at the first read after a change, since two are read per guarded send. A
     * change of a group's children happens under its entry's lock, as does the making, so no
     * read after a change sees the list from before it.
     */
    private final Map<NodeId, List<String>> memberIds = new ConcurrentHashMap<>();
    private final Set<NodeId> retired = ConcurrentHashMap.newKeySet();
    private final Map<String, Grant> grants = new ConcurrentHashMap<>();
    /** In federation, the gateway owning each node another gateway keeps; nodes this hub owns are absent. */
    private final Map<NodeId, String> owners = new ConcurrentHashMap<>();
    private final Map<NodeId, Set<String>> formerOwners = new ConcurrentHashMap<>();

    public Optional<Node> node(NodeId id) {
        return Optional.ofNullable(nodes.get(id));
    }

    public boolean isRetired(NodeId id) {
        return retired.contains(id);
    }

    public Collection<Node> nodes() {
        return nodes.values().stream().sorted(Comparator.comparing(Node::id)).toList();
    }

    public List<NodeId> children(NodeId parent) {
        return List.copyOf(children.getOrDefault(parent, Set.of()));
    }

    /** The group a node leads: itself and its direct children. */
    public List<NodeId> groupLedBy(NodeId parent) {
        List<NodeId> group = new ArrayList<>();
        group.add(parent);
        group.addAll(children(parent));
        return group;
    }

    /** The group a node belongs to as a member: its parent's group, or its own if it is a root. */
    public List<NodeId> groupOf(Node node) {
        return groupLedBy(node.parent().orElse(node.id()));
    }

    /**
     * The ids of {@link #groupOf}, one list until the group changes (a {@code List.of}, which
     * {@code List.copyOf} keeps as it is, so a rule's input does not copy it again).
     */
    public List<String> groupIdsOf(Node node) {
        return memberIds.computeIfAbsent(node.parent().orElse(node.id()),
                leader -> List.of(groupLedBy(leader).stream().map(NodeId::value).toArray(String[]::new)));
    }

    /**
     * The gateway that owns {@code id} when it is not this hub (federation): the one that keeps
     * its inbox. Empty for a node of this hub, and always on a single-host hub.
     */
    public Optional<String> owner(NodeId id) {
        return Optional.ofNullable(owners.get(id));
    }

    /** A node another gateway owns, mirrored from the state room. */
    public void putRemote(Node node, String gateway) {
        owners.put(node.id(), gateway);
        put(node);
    }

    /**
     * A node changed owner: {@code gateway} now keeps it, or this hub does when empty. The
     * gateway it left is remembered (until this hub restarts) as one that held its mail.
     */
    public void moveTo(NodeId id, Optional<String> gateway) {
        String left = gateway.isPresent() ? owners.put(id, gateway.get()) : owners.remove(id);
        if (left != null) {
            formerOwners.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet()).add(left);
        }
    }

    /** Whether {@code gateway} owned {@code id} before it moved (since this hub started). */
    public boolean ownedBefore(NodeId id, String gateway) {
        return formerOwners.getOrDefault(id, Set.of()).contains(gateway);
    }

    public void put(Node node) {
        nodes.put(node.id(), node);
        node.parent().ifPresent(p -> changeGroup(p, () -> children.computeIfAbsent(p, k -> new ConcurrentSkipListSet<>())
                .add(node.id())));
    }

    /** Removes a deleted node; its id stays retired, its children keep their recorded parent. */
    public void retire(NodeId id) {
        Node removed = nodes.remove(id);
        retired.add(id);
        if (removed != null) {
            removed.parent().ifPresent(p -> changeGroup(p, () -> children.getOrDefault(p, Set.of()).remove(id)));
        }
    }

    /** Changes the children of {@code leader}, dropping its member ids for the next read to make anew. */
    private void changeGroup(NodeId leader, Runnable change) {
        memberIds.compute(leader, (k, ids) -> {
            change.run();
            return null;
        });
    }

    public void putGrant(Grant grant) {
        grants.put(grant.id(), grant);
    }

    public Optional<Grant> grant(String id) {
        return Optional.ofNullable(grants.get(id));
    }

    public void removeGrant(String id) {
        grants.remove(id);
    }

    public List<Grant> grants() {
        return grants.values().stream().sorted(Comparator.comparing(Grant::id)).toList();
    }

    /** The first grant from {@code from} to node {@code to} that is active at {@code now}. */
    public Optional<Grant> activeGrant(NodeId from, NodeId to, Instant now) {
        return activeGrant(from, new GrantTarget.Node(to), now);
    }

    /** The first grant from {@code from} to {@code to} that is active at {@code now}. */
    public Optional<Grant> activeGrant(NodeId from, GrantTarget to, Instant now) {
        return grants.values().stream()
                .filter(g -> g.from().equals(from) && g.to().equals(to) && g.activeAt(now))
                .min(Comparator.comparing(Grant::id));
    }
}
