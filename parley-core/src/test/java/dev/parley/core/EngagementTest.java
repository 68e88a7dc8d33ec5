package dev.parley.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every combination of engage mode × sender scope × ignored-message policy × unknown-sender
 * policy, each against the same six messages. The expected column reads, per message:
 * W wakes the agent, C is kept as context only, S is skipped by the wiring, H is held for the
 * approver, D is dropped by the group's gate.
 */
class EngagementTest {
    /** (member, mentions the bot, matches the pattern "deploy", in a thread the agent engaged in). */
    private record Message(boolean member, boolean mentioned, boolean matches, boolean threadEngaged) {
    }

    private static final List<Message> MESSAGES = List.of(
            new Message(true, true, false, false),   // a member mentions the bot
            new Message(true, false, true, false),   // a member says "deploy"
            new Message(true, false, false, false),  // a member chats
            new Message(true, false, false, true),   // a member chats in a thread the agent engaged in
            new Message(false, true, false, false),  // a stranger mentions the bot
            new Message(false, false, false, false)); // a stranger chats

    @ParameterizedTest(name = "{0}, {1}, {2}, {3} -> {4}")
    @CsvSource({
            "pattern, all, drop, strict, SWSSDD",
            "pattern, all, drop, request-approval, SWSSHH",
            "pattern, all, drop, public, SWSSSS",
            "pattern, all, accumulate, strict, CWCCDD",
            "pattern, all, accumulate, request-approval, CWCCHH",
            "pattern, all, accumulate, public, CWCCCC",
            "pattern, known, drop, strict, SWSSDD",
            "pattern, known, drop, request-approval, SWSSHH",
            "pattern, known, drop, public, SWSSSS",
            "pattern, known, accumulate, strict, CWCCDD",
            "pattern, known, accumulate, request-approval, CWCCHH",
            "pattern, known, accumulate, public, CWCCSS",
            "mention, all, drop, strict, WSSSDD",
            "mention, all, drop, request-approval, WSSSHH",
            "mention, all, drop, public, WSSSWS",
            "mention, all, accumulate, strict, WCCCDD",
            "mention, all, accumulate, request-approval, WCCCHH",
            "mention, all, accumulate, public, WCCCWC",
            "mention, known, drop, strict, WSSSDD",
            "mention, known, drop, request-approval, WSSSHH",
            "mention, known, drop, public, WSSSSS",
            "mention, known, accumulate, strict, WCCCDD",
            "mention, known, accumulate, request-approval, WCCCHH",
            "mention, known, accumulate, public, WCCCSS",
            "mention-sticky, all, drop, strict, WSSWDD",
            "mention-sticky, all, drop, request-approval, WSSWHH",
            "mention-sticky, all, drop, public, WSSWWS",
            "mention-sticky, all, accumulate, strict, WCCWDD",
            "mention-sticky, all, accumulate, request-approval, WCCWHH",
            "mention-sticky, all, accumulate, public, WCCWWC",
            "mention-sticky, known, drop, strict, WSSWDD",
            "mention-sticky, known, drop, request-approval, WSSWHH",
            "mention-sticky, known, drop, public, WSSWSS",
            "mention-sticky, known, accumulate, strict, WCCWDD",
            "mention-sticky, known, accumulate, request-approval, WCCWHH",
            "mention-sticky, known, accumulate, public, WCCWSS",
    })
    void everyCombinationDecidesEachMessageAsTheRulesSay(String mode, String scope, String ignored, String unknown,
                                                          String expected) {
        StringBuilder got = new StringBuilder();
        for (Message m : MESSAGES) {
            Engagement.Admission admission = Engagement.admit(parse(Engagement.UnknownSenders.values(), unknown), m.member(),
                    false, Optional.of(new NodeId("approver")));
            got.append(switch (admission) {
                case Engagement.Admission.Out out -> 'D';
                case Engagement.Admission.Held held -> 'H';
                case Engagement.Admission.In in -> switch (Engagement.engage(parse(Engagement.Mode.values(), mode),
                        parse(Engagement.SenderScope.values(), scope), parse(Engagement.Ignored.values(), ignored),
                        in.known(), m.mentioned(), m.threadEngaged(), m::matches)) {
                    case WAKE -> 'W';
                    case CONTEXT -> 'C';
                    case SKIP -> 'S';
                };
            });
        }
        assertEquals(expected, got.toString());
    }

    @Test
    void aStrangerWhoseCardIsPendingOrAGroupWithoutApproverIsDroppedWithWhy() {
        assertEquals(new Engagement.Admission.Out("unknown sender whose approval card is pending"), Engagement.admit(
                Engagement.UnknownSenders.REQUEST_APPROVAL, false, true, Optional.of(new NodeId("approver"))));
        assertEquals(new Engagement.Admission.Out("unknown sender and no approver: treated as strict"), Engagement.admit(
                Engagement.UnknownSenders.REQUEST_APPROVAL, false, false, Optional.empty()));
        assertEquals(new Engagement.Admission.In(true), Engagement.admit(Engagement.UnknownSenders.STRICT, true, true,
                Optional.empty()), "a member is in, whatever the policy");
    }

    @Test
    void eachRoomKindGetsItsDefaultEngageMode() {
        assertEquals(List.of(Engagement.Mode.PATTERN, Engagement.Mode.MENTION, Engagement.Mode.MENTION_STICKY),
                List.of(Engagement.RoomKind.DM.defaultMode(), Engagement.RoomKind.GROUP.defaultMode(),
                        Engagement.RoomKind.THREADED.defaultMode()));
    }

    private static <E extends Enum<E>> E parse(E[] values, String wire) {
        for (E value : values) {
            if (value.name().toLowerCase(Locale.ROOT).replace('_', '-').equals(wire)) {
                return value;
            }
        }
        throw new IllegalArgumentException(wire);
    }
}
