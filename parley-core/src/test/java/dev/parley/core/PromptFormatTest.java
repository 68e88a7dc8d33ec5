package dev.parley.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The formatter's reference cases: the context header, times in the user's zone, reply_to with its quote, internal text left out, an invalid zone. */
class PromptFormatTest {
    private static final NodeId ANN = new NodeId("h-ann-1");
    private static final Instant AT = Instant.parse("2024-01-01T18:30:00Z");

    @Test
    void aConversationShowsTheZoneAndEachTimeInItInUsTwelveHourForm() {
        String prompt = PromptFormat.prompt(List.of(
                new PromptFormat.Line("m1", ANN, "Ann", AT, "lunch?", Optional.empty()),
                new PromptFormat.Line("m2", ANN, "Ann", AT.plusSeconds(13 * 3600), "still there?", Optional.empty())),
                "America/New_York");
        assertEquals("""
                <context timezone="America/New_York"/>
                <messages>
                <message id="m1" from="h-ann-1" sender="Ann" time="Jan 1, 2024, 1:30 PM">lunch?</message>
                <message id="m2" from="h-ann-1" sender="Ann" time="Jan 2, 2024, 2:30 AM">still there?</message>
                </messages>""", prompt);
    }

    @Test
    void aReplyCarriesWhatItQuotesAndEverythingIsEscaped() {
        String prompt = PromptFormat.prompt(List.of(new PromptFormat.Line("m3", ANN, "Ann \"A\"", AT, "yes & <b>no</b>",
                Optional.of(new PromptFormat.Quote("m0", "Bo", "coming <tonight>?")))), "Europe/Berlin");
        assertEquals("""
                <context timezone="Europe/Berlin"/>
                <messages>
                <message id="m3" from="h-ann-1" sender="Ann &quot;A&quot;" time="Jan 1, 2024, 7:30 PM" reply_to="m0">
                  <quoted_message from="Bo">coming &lt;tonight&gt;?</quoted_message>
                yes &amp; &lt;b&gt;no&lt;/b&gt;</message>
                </messages>""", prompt);
    }

    @Test
    void anInvalidZoneFallsBackToUtc() {
        for (String zone : List.of("Mars/Olympus", "", "+05:00", "america/new_york")) {
            assertEquals("""
                    <context timezone="UTC"/>
                    <messages>
                    <message id="m1" from="h-ann-1" sender="Ann" time="Jan 1, 2024, 6:30 PM">hi</message>
                    </messages>""", PromptFormat.prompt(List.of(new PromptFormat.Line("m1", ANN, "Ann", AT, "hi",
                    Optional.empty())), zone), zone);
        }
    }

    @Test
    void whatAnAgentKeepsInternalIsLeftOutAndTheRestTrimmed() {
        assertEquals("Hello  world", PromptFormat.visible("<internal>plan: greet</internal>Hello <internal>a\nb</internal>"
                + " world \n"));
        assertEquals("", PromptFormat.visible("  <internal>only thoughts</internal>  "));
        assertEquals("a", PromptFormat.visible("a <internal> b, cut short"), "an unclosed tag hides the rest");
    }

    @Test
    void aChatEnvelopeBecomesALineByItsMeta() {
        Envelope envelope = new Envelope("e1", 7, ANN, new NodeId("upper"), "message", Optional.of("ok"), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Map.of(Chats.MESSAGE_ID, "m9",
                Chats.USER_NAME, "Ann", Chats.SAID_AT, AT.toString(), Chats.REPLY_TO, "m8", Chats.REPLY_FROM, "Bo",
                Chats.QUOTE, "ready?"), AT.plusSeconds(60), new Trace(1, Route.INTRA_GROUP, "v1"));
        assertEquals(new PromptFormat.Line("m9", ANN, "Ann", AT, "ok", Optional.of(new PromptFormat.Quote("m8", "Bo",
                "ready?"))), PromptFormat.line(envelope), "said when it was said, not when it was delivered");
    }
}
