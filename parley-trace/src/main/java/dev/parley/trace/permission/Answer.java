package dev.parley.trace.permission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.parley.trace.TraceEvent;

import java.util.Locale;
import java.util.Optional;

/**
 * A node's answer to a permission question: the {@code data} and {@code text} of its reply.
 * The one place the verdict words are read.
 */
public record Answer(JsonNode data, Optional<String> text) {
    public Answer {
        data = data == null ? MissingNode.getInstance() : data;
    }

    /**
     * {@code allow} or {@code deny}: from {@code data.behavior}, else {@code data} (a string),
     * else the text's first word, case and punctuation aside ("Allow.", "deny — too risky").
     */
    public Optional<TraceEvent.Verdict> verdict() {
        for (JsonNode candidate : new JsonNode[]{data.path("behavior"), data}) {
            if (candidate.isTextual()) {
                Optional<TraceEvent.Verdict> verdict = word(candidate.textValue());
                if (verdict.isPresent()) {
                    return verdict;
                }
            }
        }
        return text.flatMap(Answer::word);
    }

    private static Optional<TraceEvent.Verdict> word(String text) {
        String word = text.strip().toLowerCase(Locale.ROOT).split("\\s+", 2)[0].replaceAll("[^a-z]", "");
        return switch (word) {
            case "allow" -> Optional.of(TraceEvent.Verdict.ALLOW);
            case "deny" -> Optional.of(TraceEvent.Verdict.DENY);
            default -> Optional.empty();
        };
    }
}
