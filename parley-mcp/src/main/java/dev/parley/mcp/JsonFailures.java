package dev.parley.mcp;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.JsonMappingException;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why a JSON text could not be read into a tree, said in the words of whoever wrote it: what
 * is wrong and where ({@code nesting deeper than 1000 levels}, {@code the key "to" appears
 * twice in one object}, {@code unexpected character 'x' at line 1, column 2}). Jackson's own
 * messages name its classes and settings ({@code StreamReadConstraints},
 * {@code DeserializationFeature...}); none of that reaches a client. Every surface that parses
 * JSON from outside (REST bodies, A2A, MCP over HTTP and stdio, the policy file) explains its
 * refusals here.
 */
public final class JsonFailures {
    private static final Pattern LIMIT = Pattern.compile("maximum allowed \\((\\d+)");
    private static final Pattern QUOTED = Pattern.compile("'([^']*)'");
    private static final Pattern CODE = Pattern.compile("code (\\d+)");
    /** Words that belong to the parser, not to JSON: a message holding one is never shown. */
    private static final List<String> INTERNAL = List.of("`", "Feature", "Exception", "Constraints", "com.", "java.",
            "jackson", "Jackson", "Source:", "$");

    private JsonFailures() {
    }

    /** The sentence for {@code failure}, a failure to read or map JSON; lower case, no final period. */
    public static String explain(Exception failure) {
        return switch (failure) {
            case StreamConstraintsException tooMuch -> limit(String.valueOf(tooMuch.getOriginalMessage()));
            case JsonEOFException end -> "the JSON ends before it is complete";
            case JsonParseException syntax -> syntax(String.valueOf(syntax.getOriginalMessage())) + at(syntax);
            case JsonMappingException tree -> tree(String.valueOf(tree.getOriginalMessage()), tree);
            default -> "it is not well-formed JSON";
        };
    }

    /** A limit of the parser: how deep, how long. */
    private static String limit(String message) {
        Matcher m = LIMIT.matcher(message);
        String max = m.find() ? m.group(1) : null;
        if (max == null) {
            return "it is larger or deeper than the hub accepts";
        }
        if (message.startsWith("Document nesting depth")) {
            return "nesting deeper than " + max + " levels";
        }
        if (message.startsWith("Number value length")) {
            return "a number longer than " + max + " digits";
        }
        if (message.startsWith("String value length")) {
            return "a string longer than " + max + " characters";
        }
        if (message.startsWith("Name length")) {
            return "a key longer than " + max + " characters";
        }
        if (message.startsWith("Token count")) {
            return "more than " + max + " values";
        }
        return "a document longer than " + max + " characters";
    }

    /** A syntax error, named by what the writer typed. */
    private static String syntax(String message) {
        if (message.contains("UTF-8") || message.contains("UTF8")) {
            return "bytes that are not UTF-8";
        }
        if (message.contains("comment")) {
            return "a comment, which JSON does not have";
        }
        if (message.startsWith("Non-standard token")) {
            return quoted(message).map(t -> t + " is not a JSON value").orElse("a value JSON does not have");
        }
        if (message.contains("Leading zeroes")) {
            return "a number with a leading zero";
        }
        if (message.startsWith("Illegal unquoted character")) {
            return "a control character" + character(message).map(c -> " " + c).orElse("")
                    + " that must be escaped inside a string";
        }
        if (message.startsWith("Unrecognized character escape")) {
            return quoted(message).map(c -> "an unknown escape \\" + c).orElse("an unknown escape");
        }
        if (message.startsWith("Unrecognized token")) {
            return quoted(message).map(t -> "the word '" + t + "', which is not a JSON value")
                    .orElse("a word that is not a JSON value");
        }
        if (message.startsWith("Unexpected character")) {
            return character(message).map(c -> "unexpected character " + c).orElse("an unexpected character");
        }
        if (message.startsWith("Unexpected close marker")) {
            return quoted(message).map(c -> "an unexpected '" + c + "'").orElse("an unexpected closing bracket");
        }
        String first = message.lines().findFirst().orElse("").strip();
        return first.isEmpty() || INTERNAL.stream().anyMatch(first::contains) ? "it is not well-formed JSON"
                : Character.toLowerCase(first.charAt(0)) + first.substring(1);
    }

    /** A failure of building the tree after the syntax was fine. */
    private static String tree(String message, JsonMappingException mapping) {
        if (message.startsWith("Duplicate field")) {
            return quoted(message).map(k -> "the key \"" + k + "\" appears twice in one object")
                    .orElse("a key appears twice in one object");
        }
        if (message.startsWith("Trailing token")) {
            return "there is more after the JSON value" + at(mapping);
        }
        return "it is not well-formed JSON";
    }

    /** The character a message names by its code: {@code 'x'}, or {@code (code 1)} when it is not printable. */
    private static Optional<String> character(String message) {
        Matcher m = CODE.matcher(message);
        if (!m.find()) {
            return Optional.empty();
        }
        int code = Integer.parseInt(m.group(1));
        return Optional.of(code >= 0x20 && code != 0x7f ? "'" + Character.toString(code) + "'" : "(code " + code + ")");
    }

    private static Optional<String> quoted(String message) {
        Matcher m = QUOTED.matcher(message);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /** " at line L, column C", when the parser knew. */
    private static String at(JsonProcessingException e) {
        JsonLocation location = e.getLocation();
        return location == null || location.getLineNr() < 1 ? ""
                : " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    }
}
