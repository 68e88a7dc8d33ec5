package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.io.IOException;

/**
 * An option's JSON value ({@code --data}, a task's {@code --input}, {@code --progress}, {@code
 * --result}), parsed where it is given so that malformed JSON is a usage error, not a 400 from
 * the hub. Its {@code toString} is the text given: picocli writes every option's value with
 * {@code String.valueOf} while it parses, and a tree's own {@code toString} starts Jackson's
 * mapper, tens of milliseconds of a client command's start (JsonTrees says why).
 */
record JsonArgument(JsonNode tree, String text) {
    @Override
    public String toString() {
        return text;
    }

    static final class Converter implements ITypeConverter<JsonArgument> {
        @Override
        public JsonArgument convert(String value) {
            try {
                JsonNode json = JsonTrees.read(value);
                if (json.isMissingNode()) {
                    throw new TypeConversionException("empty JSON");
                }
                return new JsonArgument(json, value);
            } catch (IOException e) {
                throw new TypeConversionException("not JSON: " + e.getMessage().lines().findFirst().orElse(""));
            }
        }
    }
}
