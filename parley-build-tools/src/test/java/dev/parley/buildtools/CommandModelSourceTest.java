package dev.parley.buildtools;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.lang.invoke.MethodHandles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * CommandModelSource on fixture commands (every kind of argument the CLI's commands use, groups
 * within groups among them): the source it writes compiles, builds each command
 * it could transcribe without reading annotations, and sets the same fields picocli sets; a
 * command it cannot transcribe is left out with the reason.
 */
class CommandModelSourceTest {
    private static final String WRITTEN = "WrittenFixtureCommands";

    @Command(name = "fixture", mixinStandardHelpOptions = true, version = "fixture 1",
            subcommands = {Good.class, Secret.class, OnAMethod.class, OddType.class, HelpCommand.class})
    static final class Root implements Runnable {
        @Override
        public void run() {
        }
    }

    @Command(name = "good", mixinStandardHelpOptions = true, description = "Every kind of argument the CLI uses.",
            footer = "A footer with a %n line break.")
    static final class Good implements Runnable {
        @Option(names = "--name", defaultValue = "${env:PARLEY_FIXTURE_UNSET:-anonymous}", description = "A name.")
        String name;

        @Option(names = {"-c", "--count"}, required = true, description = "How many.")
        int count;

        @Option(names = "--meta", paramLabel = "K=V", description = "Repeatable.")
        Map<String, String> meta = new LinkedHashMap<>();

        @Parameters(paramLabel = "WORD", arity = "0..*", description = "Words.")
        List<String> words;

        @Mixin
        Shared shared;

        @ArgGroup(exclusive = true, multiplicity = "0..1")
        Either either;

        @Spec
        CommandSpec spec;

        static final class Either {
            @Option(names = "--left")
            String left;

            @ArgGroup(exclusive = false, multiplicity = "1")
            Pair right;
        }

        static final class Pair {
            @Option(names = "--right", required = true)
            String right;

            @Option(names = "--tag")
            List<String> tags = new ArrayList<>();
        }

        @Override
        public void run() {
        }
    }

    static final class Shared {
        @Spec(Spec.Target.MIXEE)
        CommandSpec mixee;

        @Option(names = "--json", description = "JSON out.")
        boolean json;
    }

    @Command(name = "secret")
    static final class Secret implements Runnable {
        @Option(names = "--hidden-field")
        private String field;

        @Override
        public void run() {
        }
    }

    @Command(name = "on-a-method")
    static final class OnAMethod implements Runnable {
        String value;

        @Option(names = "--value")
        void value(String value) {
            this.value = value;
        }

        @Override
        public void run() {
        }
    }

    @Command(name = "odd-type")
    static final class OddType implements Runnable {
        @Option(names = "--ratio")
        float ratio;

        @Override
        public void run() {
        }
    }

    private static CommandModelSource writer;
    private static String source;
    private static PrebuiltCommands written;

    @BeforeAll
    static void writeAndCompile(@TempDir Path dir) throws Exception {
        writer = new CommandModelSource(CommandModelSourceTest.class.getPackageName(), WRITTEN);
        source = writer.write(new CommandLine(Root.class));
        Path file = dir.resolve(WRITTEN + ".java");
        Files.writeString(file, source);
        Path classes = Files.createDirectories(dir.resolve("classes"));
        String classPath = Stream.of(CommandLine.class, CommandModelSourceTest.class)
                .map(c -> Path.of(location(c)).toString())
                .reduce((a, b) -> a + java.io.File.pathSeparator + b).orElseThrow();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int status = javac.run(null, errors, errors, "-d", classes.toString(), "-cp", classPath,
                "-Xlint:none", file.toString());
        assertEquals(0, status, errors.toString());
        // Defined in this test's own package and loader: the written code sets package-private fields.
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        Class<?> main = null;
        try (Stream<Path> files = Files.list(classes.resolve(CommandModelSourceTest.class.getPackageName().replace('.', '/')))) {
            // the outer class first: defining a nested one links it to its nest host
            for (Path classFile : files.sorted(Comparator.comparing((Path p) -> p.toString().length())).toList()) {
                Class<?> defined = lookup.defineClass(Files.readAllBytes(classFile));
                if (defined.getSimpleName().equals(WRITTEN)) {
                    main = defined;
                }
            }
        }
        assertNotNull(main);
        written = (PrebuiltCommands) main.getDeclaredConstructor().newInstance();
    }

    private static java.net.URI location(Class<?> type) {
        try {
            return type.getProtectionDomain().getCodeSource().getLocation().toURI();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void commandsItCannotTranscribeAreLeftOutWithTheReason() {
        List<String> skipped = writer.skipped();
        assertEquals(4, skipped.size(), skipped.toString());
        assertReason(skipped.get(0), "secret", "private");
        assertReason(skipped.get(1), "on-a-method", "is not a field");
        assertReason(skipped.get(2), "odd-type", "float");
        assertReason(skipped.get(3), "help", "outside");
        for (String name : List.of("secret", "on-a-method", "odd-type", "help")) {
            assertNull(written.subcommand(name), name);
        }
        assertTrue(source.contains(" * - odd-type: "), "the written class names what it left out");
    }

    private static void assertReason(String reason, String command, String why) {
        assertTrue(reason.startsWith(command + ": ") && reason.contains(why), reason);
    }

    @Test
    void variablesAreWrittenAsDeclaredNotAsTheBuildSawThem() {
        assertTrue(source.contains("\"${env:PARLEY_FIXTURE_UNSET:-anonymous}\""), source);
    }

    @Test
    void theWrittenCommandHasTheAnnotatedHelp() {
        CommandLine annotated = new CommandLine(Root.class).getSubcommands().get("good");
        assertEquals(annotated.getUsageMessage(CommandLine.Help.Ansi.OFF),
                goodLine(written).getUsageMessage(CommandLine.Help.Ansi.OFF));
        assertEquals(new CommandLine(Root.class).getCommandSpec().version()[0],
                written.root().getCommandSpec().version()[0]);
    }

    @Test
    void theWrittenCommandSetsTheAnnotatedFields() {
        CommandLine root = written.root();
        CommandLine good = written.subcommand("good");
        root.addSubcommand("good", good);
        root.parseArgs("good", "-c", "3", "--meta", "k=v", "--json", "--left", "L", "one", "two");
        Good command = good.getCommand();
        assertEquals("anonymous", command.name);
        assertEquals(3, command.count);
        assertEquals(Map.of("k", "v"), command.meta);
        assertEquals(List.of("one", "two"), command.words);
        assertTrue(command.shared.json);
        assertSame(good.getCommandSpec(), command.spec);
        assertSame(good.getCommandSpec(), command.shared.mixee);
        assertNotNull(command.either);
        assertEquals("L", command.either.left);
        assertNull(command.either.right);

        root.parseArgs("good", "-c", "3", "--right", "R");
        assertNull(command.either.left);
        assertEquals("R", command.either.right.right);
        assertEquals(List.of(), command.either.right.tags, "a subgroup's field keeps its initial value");
    }

    @Test
    void theWrittenCommandRefusesWhatTheAnnotatedOneRefuses() {
        CommandLine root = written.root();
        root.addSubcommand("good", written.subcommand("good"));
        CommandLine.ParameterException missing = org.junit.jupiter.api.Assertions.assertThrows(
                CommandLine.ParameterException.class, () -> root.parseArgs("good", "--left", "L"));
        assertTrue(missing.getMessage().contains("--count"), missing.getMessage());
        CommandLine.ParameterException both = org.junit.jupiter.api.Assertions.assertThrows(
                CommandLine.ParameterException.class, () -> root.parseArgs("good", "-c", "1", "--left", "L", "--right", "R"));
        assertTrue(both.getMessage().contains("mutually exclusive"), both.getMessage());
    }

    private static CommandLine goodLine(PrebuiltCommands commands) {
        CommandLine root = commands.root();
        root.addSubcommand("good", commands.subcommand("good"));
        return root.getSubcommands().get("good");
    }
}
