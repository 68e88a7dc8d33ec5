package dev.parley.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What a message says, shared by {@code send} and {@code reply}: TEXT words (or {@code -} to
 * read the text from stdin) and/or {@code --data JSON}. The hub needs at least one of them;
 * checking here turns a forgotten text into a usage error instead of a round trip.
 */
public final class MessageContent {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--data", paramLabel = "JSON", converter = JsonArgument.Converter.class,
            description = "Structured payload, any JSON value.")
    JsonArgument data;

    /** Puts {@code text} and {@code data} into {@code body}; {@code words} are the positional TEXT. */
    void fill(ObjectNode body, List<String> words) {
        String text = text(words);
        if (text == null && data == null) {
            throw new ParameterException(mixee.commandLine(), "Give TEXT, '-' to read it from stdin, or --data JSON");
        }
        if (text != null) {
            body.put("text", text);
        }
        if (data != null) {
            body.set("data", data.tree());
        }
    }

    private static String text(List<String> words) {
        if (words == null || words.isEmpty()) {
            return null;
        }
        if (words.size() == 1 && words.getFirst().equals("-")) {
            try {
                String piped = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
                // `echo hi | parley send -`: the shell's final newline is not part of the message.
                return piped.endsWith("\r\n") ? piped.substring(0, piped.length() - 2)
                        : piped.endsWith("\n") ? piped.substring(0, piped.length() - 1) : piped;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the text from stdin", e);
            }
        }
        return String.join(" ", words);
    }
}
