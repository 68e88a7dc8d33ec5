package dev.parley.server.chat;

import org.junit.jupiter.api.Test;
import org.kitteh.irc.client.library.feature.CaseMapping;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the IRC adapter makes of text: lines that fit IRC, out; a mention of the bot, in. */
class IrcAdapterTest {
    @Test
    void eachLineOfTheTextIsAPrivmsgAndBlankLinesAreLeftOut() {
        assertEquals(List.of("one", "  two", "three"), IrcAdapter.lines("one\r\n\n  two  \rthree\n", 400, 20));
        assertEquals(List.of(), IrcAdapter.lines(" \n\t\n", 400, 20), "nothing to say: nothing posted");
        assertEquals(List.of("a ctcp"), IrcAdapter.lines("\u0001a ctcp\u0001\u0000", 400, 20),
                "no CTCP and no NUL from an agent");
    }

    @Test
    void aLongLineIsCutBetweenWordsWithinTheBytesOfALine() {
        String text = "word ".repeat(200).strip();
        List<String> lines = IrcAdapter.lines(text, 400, 20);
        assertEquals(3, lines.size(), lines::toString);
        assertTrue(lines.stream().allMatch(l -> l.getBytes(StandardCharsets.UTF_8).length <= 400
                && l.startsWith("word") && l.endsWith("word")), lines::toString);
        assertEquals(text, String.join(" ", lines), "nothing lost at a cut");
    }

    @Test
    void aCutNeverSplitsACharacter() {
        String text = "é".repeat(150) + "😀".repeat(150); // 2 and 4 bytes each, no spaces
        List<String> lines = IrcAdapter.lines(text, 401, 20);
        assertTrue(lines.stream().allMatch(l -> l.getBytes(StandardCharsets.UTF_8).length <= 401
                && new String(l.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8).equals(l)), lines::toString);
        assertEquals(text, String.join("", lines));
    }

    @Test
    void pastTheMostLinesTheLastSaysHowManyMoreThereWere() {
        List<String> lines = IrcAdapter.lines("x\n".repeat(30), 400, 20);
        assertEquals(20, lines.size());
        assertEquals("[11 more lines: too long for IRC]", lines.getLast());
    }

    @Test
    void nickColonOrCommaAtTheStartMentionsTheBotAndIsLeftOut() {
        CaseMapping rfc = CaseMapping.RFC1459;
        assertEquals(Optional.of("hello"), IrcAdapter.addressed("parley: hello", "parley", rfc));
        assertEquals(Optional.of("hi there"), IrcAdapter.addressed("Parley,hi there", "parley", rfc));
        assertEquals(Optional.of("x"), IrcAdapter.addressed("bot{1}: x", "BOT[1]", rfc), "as the server folds nicks");
        assertEquals(Optional.empty(), IrcAdapter.addressed("parley hello", "parley", rfc));
        assertEquals(Optional.empty(), IrcAdapter.addressed("parleyx: hello", "parley", rfc));
        assertEquals(Optional.empty(), IrcAdapter.addressed("hey parley: hello", "parley", rfc));
        assertEquals(Optional.empty(), IrcAdapter.addressed("parley", "parley", rfc));
    }
}
