package dev.parley.core;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Messaging groups, their wirings and members, chat identities, approval cards and engaged threads. */
public interface ChatStore {
    Optional<MessagingGroup> group(String platform, String room);

    Optional<MessagingGroup> group(String id);

    List<MessagingGroup> groups();

    /** Creates or replaces a group's settings, with its audit entry. */
    void putGroup(MessagingGroup group, AuditEntry audit);

    List<MessagingGroup.Wiring> wirings(String groupId);

    /** Creates or replaces the wiring of {@code wiring.agent()} in its group. */
    void wire(MessagingGroup.Wiring wiring, AuditEntry audit);

    void unwire(String groupId, NodeId agent, AuditEntry audit);

    /** The node that speaks for a platform's user, if it has one. */
    Optional<NodeId> identity(String platform, String user);

    /** The platform and user a human node speaks for, if it speaks for one. */
    Optional<Identity> identityOf(NodeId node);

    /** The human nodes that speak for users of {@code platform}. */
    List<NodeId> humans(String platform);

    /** A platform's user and the node that speaks for it. */
    record Identity(String platform, String user, NodeId node) {
    }

    /** Binds a user to the node made for it. */
    void bindIdentity(String platform, String user, NodeId node);

    /** Whether {@code node} is a member of the group, and a known one (approved or added, not a passer-by). */
    Optional<Boolean> member(String groupId, NodeId node);

    void addMember(String groupId, NodeId node, boolean known, Instant at);

    /** Whether {@code agent} engaged in {@code thread} of the group before (mention-sticky). */
    boolean engaged(String groupId, NodeId agent, String thread);

    void engage(String groupId, NodeId agent, String thread);

    /** Raises {@code card} unless one for its group and sender is pending: returns whether it was raised. */
    boolean raise(ApprovalCard card, AuditEntry audit);

    Optional<ApprovalCard> card(String id);

    /** The pending card of a group for a sender (or, for a room card, for the room), if any. */
    Optional<ApprovalCard> pendingCard(String groupId, String user);

    List<ApprovalCard> pendingCards();

    /** How many cards wait for an answer. */
    int pendingCardCount();

    /** Removes an answered card, with the answer's audit entry; false (nothing written) when it was not pending. */
    boolean settle(String cardId, AuditEntry audit);

    /**
     * Registers (or replaces) a platform whose adapter signs what it hands in, with its secret,
     * and the URL its bridge takes chat messages out at, if any; an IRC platform of the same id
     * is replaced.
     */
    void putPlatform(String id, String secret, Optional<String> outboundUrl, Instant at, AuditEntry audit);

    /** Registers (or replaces) an IRC platform, its password sealed; a bridge of the same id is replaced. */
    void putIrc(ChatPlatform.Irc irc, Instant at, AuditEntry audit);

    /** Every registered platform, bridges and IRC networks, by id. */
    List<ChatPlatform> platforms();

    /** The URL a platform's bridge takes chat messages out at, if it has one. */
    Optional<String> platformOutbound(String id);

    /** The platforms whose bridge takes chat messages out. */
    List<String> bridgedPlatforms();

    /** The signing secret of a platform, if it is registered. */
    Optional<String> platformSecret(String id);

    /** The hub's approver: who answers cards of groups without their own, and every room card. */
    Optional<NodeId> hubApprover();

    void hubApprover(Optional<NodeId> node, AuditEntry audit);
}
