package dev.parley.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.IoReason;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** {@code parley schema ...}: the JSON Schema (2020-12) that a kind's {@code data} must satisfy. */
@Command(name = "schema", mixinStandardHelpOptions = true,
        description = {"Set, show, list and remove payload schemas (admin).",
                "A send of a kind with a schema is refused (schema_violation) unless",
                "its data satisfies it."},
        subcommands = {SchemaCommand.PutSchema.class, SchemaCommand.ShowSchema.class, SchemaCommand.ListSchemas.class,
                SchemaCommand.RemoveSchema.class})
final class SchemaCommand extends CommandGroup {

    static String path(String kind) {
        return "/v1/schemas/" + HubClient.segment(kind);
    }

    static String updated(JsonNode schema) {
        return "kind=" + ClientCommand.field(schema, "kind") + "  version=" + ClientCommand.field(schema, "version")
                + "  updated=" + ClientCommand.field(schema, "updatedAt");
    }

    @Command(name = "put", aliases = "set", mixinStandardHelpOptions = true,
            description = "Set (or replace) the schema of a kind's data from a JSON Schema file.")
    static final class PutSchema extends ClientCommand {
        @Parameters(index = "0", paramLabel = "KIND", description = "Message kind.")
        String kind;

        @Parameters(index = "1", paramLabel = "FILE", description = "The JSON Schema document; '-' reads it from stdin.")
        String file;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode schema = client.put(path(kind), read(spec, "FILE", file));
            emit(schema, () -> out().println("schema set  " + updated(schema)));
        }
    }

    /**
     * The JSON Schema document in {@code file} ('-': stdin), parsed locally, so a typo is a
     * usage error of {@code option} rather than a round trip.
     */
    static JsonNode read(CommandSpec spec, String option, String file) {
        String text;
        try {
            text = file.equals("-") ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
                    : Files.readString(Path.of(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ParameterException(spec.commandLine(), option + ": cannot read " + file + ": " + IoReason.of(e));
        }
        try {
            JsonNode document = JsonTrees.read(text);
            if (!document.isObject()) {
                throw new ParameterException(spec.commandLine(), option + ": a JSON Schema is a JSON object");
            }
            return document;
        } catch (JsonProcessingException e) {
            throw new ParameterException(spec.commandLine(), option + ": not JSON: " + e.getOriginalMessage());
        }
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show the schema of a kind.")
    static final class ShowSchema extends ClientCommand {
        @Parameters(paramLabel = "KIND", description = "Message kind.")
        String kind;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode schema = client.get(path(kind));
            emit(schema, () -> {
                out().println(updated(schema));
                print(out(), schema.path("schema"));
            });
        }

        private static void print(PrintWriter out, JsonNode document) {
            out.println(document.toPrettyString());
        }
    }

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true, description = "List the kinds with a schema.")
    static final class ListSchemas extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get("/v1/schemas");
            emit(answer, () -> {
                Table table = new Table("KIND", "VERSION", "UPDATED");
                answer.path("items").forEach(s -> table.row(field(s, "kind"), field(s, "version"),
                        field(s, "updatedAt")));
                table.print(out());
            });
        }
    }

    @Command(name = "rm", aliases = "remove", mixinStandardHelpOptions = true,
            description = {"Remove a kind's schema: its data is no longer checked.",
                    "With --json prints {\"kind\":KIND,\"deleted\":true} (the hub answers 204 without a body)."})
    static final class RemoveSchema extends ClientCommand {
        @Parameters(paramLabel = "KIND", description = "Message kind.")
        String kind;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            client.delete(path(kind));
            emit(JsonTrees.object().put("kind", kind).put("deleted", true),
                    () -> line("deleted", "schema", kind));
        }
    }
}
