package dev.parley.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Model.ArgGroupSpec;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

import java.lang.reflect.Field;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The model the build writes (PrebuiltCommands) against the one picocli reads from the
 * annotations: the same help text, the same settings of every argument and group, and each
 * argument setting the same field of the same object.
 */
class PrebuiltCommandsTest {
    /** Left to their annotations: their classes are outside dev.parley.cli. */
    private static final Set<String> ANNOTATED = Set.of("bench", "help");

    private static final PrebuiltCommands WRITTEN = PrebuiltCommands.load()
            .orElseThrow(() -> new AssertionError("the build wrote no " + PrebuiltCommands.WRITTEN));

    static Stream<String> written() {
        return ParleyCommand.all().getSubcommands().keySet().stream().filter(name -> !ANNOTATED.contains(name));
    }

    @Test
    void everySubcommandIsWrittenButTheOnesLeftToTheirAnnotations() {
        Set<String> written = new TreeSet<>();
        Set<String> annotated = new TreeSet<>();
        for (String name : ParleyCommand.all().getSubcommands().keySet()) {
            (WRITTEN.subcommand(name) == null ? annotated : written).add(name);
        }
        assertEquals(new TreeSet<>(ANNOTATED), annotated);
        assertEquals(28, written.size(), written.toString());
    }

    @Test
    void theWrittenRootIsTheAnnotatedRootWithoutSubcommands() {
        CommandSpec annotated = ParleyCommand.all().getCommandSpec();
        CommandSpec written = WRITTEN.root().getCommandSpec();
        assertTrue(written.subcommands().isEmpty());
        sameSettings(annotated, written);
        assertEquals(Arrays.asList(annotated.version()), Arrays.asList(written.version()));
    }

    @ParameterizedTest
    @MethodSource("written")
    void theWrittenCommandIsTheAnnotatedOne(String name) {
        CommandLine annotated = ParleyCommand.all().getSubcommands().get(name);
        CommandLine root = WRITTEN.root();
        root.addSubcommand(name, WRITTEN.subcommand(name));
        same(annotated, root.getSubcommands().get(name));
    }

    @ParameterizedTest
    @MethodSource("written")
    void eachArgumentSetsTheFieldItsAnnotationMarks(String name) {
        int sampled = 0;
        int checked = 0;
        for (List<String> path : leaves(ParleyCommand.all().getSubcommands().get(name), List.of(name))) {
            CommandSpec shape = find(ParleyCommand.all(), path).getCommandSpec();
            for (ArgSpec arg : shape.args()) {
                String[] sample = sample(arg);
                if (sample == null) {
                    continue;
                }
                sampled++;
                List<String> args = new ArrayList<>(path);
                args.addAll(Arrays.asList(sample));
                CommandLine annotatedRoot = ParleyCommand.all();
                CommandLine writtenRoot = ParleyCommand.forArgs(args.toArray(String[]::new));
                ArgSpec annotated = parse(annotatedRoot, path, args, arg);
                ArgSpec written = parse(writtenRoot, path, args, arg);
                Field field = (Field) annotated.userObject();
                field.setAccessible(true);
                Object expected = read(field, annotated.scope());
                Object actual = read(field, written.scope());
                // the sample may be refused (a value the option's converter rejects, a positional after
                // one not given): then neither model sets the field
                assertEquals(String.valueOf(expected), String.valueOf(actual), path + " " + describe(arg));
                if (expected == null) {
                    continue;
                }
                if (arg.group() != null) {
                    Field group = (Field) readField(annotated.group().setter());
                    group.setAccessible(true);
                    assertNotNull(read(group, written.group().scope()), path + " " + describe(arg) + ": no group object");
                }
                checked++;
            }
        }
        assertTrue(checked > 0 || sampled == 0, name + ": no argument took its sample");
    }

    /** What a user sees when the parse fails or help is asked for, before any request is made. */
    @ParameterizedTest
    @MethodSource("written")
    void refusalsAndHelpReadTheSame(String name) {
        int compared = 0;
        for (List<String> path : leaves(ParleyCommand.all().getSubcommands().get(name), List.of(name))) {
            List<List<String>> inputs = new ArrayList<>();
            inputs.add(List.of("--no-such-option"));
            inputs.add(List.of("-h"));
            for (OptionSpec option : find(ParleyCommand.all(), path).getCommandSpec().options()) {
                if (option.arity().min() > 0) {
                    inputs.add(List.of(option.longestName())); // its value missing
                }
            }
            for (List<String> input : inputs) {
                List<String> args = new ArrayList<>(path);
                args.addAll(input);
                String[] argv = args.toArray(String[]::new);
                assertEquals(run(ParleyCommand.all(), argv), run(ParleyCommand.forArgs(argv), argv), args.toString());
                compared++;
            }
        }
        assertTrue(compared > 0);
    }

    private static String run(CommandLine cli, String[] args) {
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        cli.setOut(new java.io.PrintWriter(out, true));
        cli.setErr(new java.io.PrintWriter(err, true));
        int exit = cli.execute(args);
        return "exit " + exit + "\nout:\n" + out + "\nerr:\n" + err;
    }

    private static ArgSpec parse(CommandLine root, List<String> path, List<String> args, ArgSpec like) {
        CommandLine command = find(root, path);
        command.getCommandSpec().parser().collectErrors(true); // a required option may be missing
        root.getCommandSpec().parser().collectErrors(true);
        root.parseArgs(args.toArray(String[]::new));
        return command.getCommandSpec().args().stream().filter(a -> describe(a).equals(describe(like)))
                .findFirst().orElseThrow(() -> new AssertionError(path + ": no " + describe(like)));
    }

    private static Object read(Field field, picocli.CommandLine.Model.IScope scope) {
        try {
            Object holder = scope.get();
            return holder == null ? null : field.get(holder);
        } catch (Exception e) {
            throw new AssertionError("cannot read " + field, e);
        }
    }

    /** The field a group's object is stored in; picocli's binding for it keeps it private. */
    private static Object readField(Object binding) {
        if (binding.getClass().getSimpleName().equals("FieldBinding")) {
            try {
                Field field = binding.getClass().getDeclaredField("field");
                field.setAccessible(true);
                return field.get(binding);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("not a field binding: " + binding);
    }

    /** Arguments that give {@code arg} a value, or null for a type this test has no sample of. */
    private static String[] sample(ArgSpec arg) {
        if (arg.isOption() && (((OptionSpec) arg).usageHelp() || ((OptionSpec) arg).versionHelp())) {
            return null;
        }
        Class<?> type = arg.type();
        String value;
        if (type == boolean.class || type == Boolean.class) {
            return arg.isOption() ? new String[] {((OptionSpec) arg).longestName()} : null;
        } else if (type == String.class || type == Path.class || List.class.isAssignableFrom(type)
                && arg.auxiliaryTypes()[0] == String.class) {
            value = "sample";
        } else if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            value = "7";
        } else if (type == double.class || type == Double.class) {
            value = "2.5";
        } else if (type == Duration.class) {
            value = "30s";
        } else if (Map.class.isAssignableFrom(type)) {
            value = "k=v";
        } else if (type.isEnum()) {
            value = type.getEnumConstants()[0].toString();
        } else if (type == JsonArgument.class) {
            value = "{\"k\":1}";
        } else {
            return null;
        }
        return arg.isOption() ? new String[] {((OptionSpec) arg).longestName(), value} : new String[] {value};
    }

    private static List<List<String>> leaves(CommandLine command, List<String> path) {
        if (command.getSubcommands().isEmpty()) {
            return List.of(path);
        }
        List<List<String>> leaves = new ArrayList<>();
        command.getSubcommands().forEach((name, sub) -> {
            if (name.equals(sub.getCommandName())) {
                List<String> longer = new ArrayList<>(path);
                longer.add(name);
                leaves.addAll(leaves(sub, longer));
            }
        });
        return leaves;
    }

    private static CommandLine find(CommandLine root, List<String> path) {
        CommandLine command = root;
        for (String name : path) {
            command = command.getSubcommands().get(name);
        }
        return command;
    }

    private static void same(CommandLine annotated, CommandLine written) {
        String where = annotated.getCommandSpec().qualifiedName();
        assertEquals(annotated.getUsageMessage(Help.Ansi.OFF), written.getUsageMessage(Help.Ansi.OFF), where);
        sameSettings(annotated.getCommandSpec(), written.getCommandSpec());
        assertEquals(annotated.getSubcommands().keySet(), written.getSubcommands().keySet(), where);
        annotated.getSubcommands().forEach((name, sub) -> same(sub, written.getSubcommands().get(name)));
    }

    private static void sameSettings(CommandSpec annotated, CommandSpec written) {
        String where = annotated.qualifiedName();
        assertEquals(annotated.name(), written.name(), where);
        assertEquals(Arrays.asList(annotated.aliases()), Arrays.asList(written.aliases()), where);
        assertEquals(className(annotated.versionProvider()), className(written.versionProvider()), where);
        Map<String, String> annotatedArgs = describeArgs(annotated.args());
        Map<String, String> writtenArgs = describeArgs(written.args());
        assertEquals(annotatedArgs.keySet(), writtenArgs.keySet(), where);
        annotatedArgs.forEach((arg, settings) -> assertEquals(settings, writtenArgs.get(arg), where + " " + arg));
        assertEquals(annotated.argGroups().stream().map(PrebuiltCommandsTest::describe).toList(),
                written.argGroups().stream().map(PrebuiltCommandsTest::describe).toList(), where);
        assertEquals(annotated.usageMessage().width(), written.usageMessage().width(), where);
        assertEquals(annotated.exitCodeOnInvalidInput(), written.exitCodeOnInvalidInput(), where);
        assertEquals(annotated.interpolateVariables(), written.interpolateVariables(), where);
    }

    private static Map<String, String> describeArgs(List<ArgSpec> args) {
        Map<String, String> all = new LinkedHashMap<>();
        args.stream().sorted(java.util.Comparator.comparing(PrebuiltCommandsTest::describe))
                .forEach(arg -> all.put(describe(arg), settings(arg)));
        return all;
    }

    private static String describe(ArgSpec arg) {
        return arg.isOption() ? String.join("|", ((OptionSpec) arg).names())
                : "positional " + ((PositionalParamSpec) arg).index() + " " + arg.paramLabel();
    }

    /** Every setting picocli reads at parse or help time, as text. */
    private static String settings(ArgSpec arg) {
        List<Object> all = new ArrayList<>(List.of(
                Arrays.asList(arg.description()), arg.paramLabel(), arg.arity(), arg.required(), arg.originallyRequired(),
                arg.hidden(), arg.hideParamSyntax(), arg.type(), Arrays.asList(arg.auxiliaryTypes()),
                arg.typeInfo().isBoolean(), arg.typeInfo().isMultiValue(), arg.typeInfo().isCollection(),
                arg.typeInfo().isMap(), arg.typeInfo().isArray(), arg.typeInfo().isEnum(), arg.typeInfo().isOptional(),
                String.valueOf(arg.defaultValue()), String.valueOf(arg.mapFallbackValue()), arg.showDefaultValue(),
                Arrays.stream(arg.converters()).map(PrebuiltCommandsTest::className).toList(),
                String.valueOf(arg.completionCandidates() == null ? null
                        : Stream.of(arg.completionCandidates()).flatMap(c -> {
                            List<String> l = new ArrayList<>();
                            c.forEach(l::add);
                            return l.stream();
                        }).toList()),
                String.valueOf(arg.splitRegex()), String.valueOf(arg.splitRegexSynopsisLabel()),
                arg.interactive(), String.valueOf(arg.descriptionKey()), arg.inherited(), arg.scopeType(),
                arg.hasInitialValue(),
                // picocli reads a group argument's initial value from the group's first object, which
                // no parse has made yet; eachArgumentSetsTheFieldItsAnnotationMarks covers groups
                arg.group() == null ? String.valueOf(arg.initialValue()) : "in a group", arg.toString(),
                arg.group() == null ? "no group" : describe(arg.group())));
        if (arg instanceof OptionSpec option) {
            all.addAll(List.of(option.usageHelp(), option.versionHelp(), option.help(), option.negatable(),
                    String.valueOf(option.fallbackValue()), option.order(), option.shortestName()));
        } else {
            all.add(((PositionalParamSpec) arg).index());
        }
        return all.stream().map(String::valueOf).collect(Collectors.joining(" ; "));
    }

    private static String describe(ArgGroupSpec group) {
        return group.exclusive() + " " + group.multiplicity() + " " + group.validate() + " " + group.order() + " "
                + group.heading() + " " + group.headingKey() + " " + group.typeInfo().getType() + " "
                + group.args().stream().map(PrebuiltCommandsTest::describe).sorted().toList()
                + " subgroups " + group.subgroups().size();
    }

    private static String className(Object o) {
        return o == null ? "null" : o.getClass().getName();
    }
}
