package dev.parley.buildtools;

import picocli.CommandLine;
import picocli.CommandLine.Model.ArgGroupSpec;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.IAnnotatedElement;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.Model.UsageMessageSpec;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Writes the Java source of a class that builds a picocli command tree through picocli's
 * programmatic API, from the tree picocli builds by reading the commands' annotations.
 *
 * <p>Why: reading annotations at run time makes the JDK spin a proxy class for each annotation
 * type, in the interpreter, and a one-shot command pays for that at every start (about 55 ms of a
 * {@code parley send} on the 2-core test machine). The written class builds the same model
 * without reading an annotation: each field is set by a generated switch, each converter,
 * candidate list and version provider is constructed directly. The annotated classes stay the one
 * definition of every command; the CLI's tests check the written model against the annotated one.
 *
 * <p>A subcommand of the root that uses something this writer does not transcribe (a class
 * outside the written class's package, a private field, an option on a method, a group of many
 * objects) is left out, with the reason in the written class's comment; the CLI builds those from
 * their annotations as before. Every name and text is written as declared, never as picocli fills
 * in its variables ({@code ${env:…}}): the build machine's environment stays out of the source. The root must
 * be transcribable. Usage: {@code CommandModelSource <source dir> <class>#<static method giving
 * the annotated root CommandLine> <simple name of the class to write>}.
 */
public final class CommandModelSource {
    /** The key picocli files the standard help options' mixin under. */
    private static final String STANDARD_HELP = "mixinStandardHelpOptions";

    /** The class of picocli's standard help options (-h, -V), whose fields no one reads. */
    private static final Class<?> STANDARD_HELP_MIXIN = standardHelpMixinClass();
    /** An option with every setting at its default, to compare against. */
    private static final OptionSpec PLAIN_OPTION = OptionSpec.builder("--plain").build();

    private final String packageName;
    private final String className;
    /** Every field a generated binding reads and writes, by its index in the switch. */
    private final List<Field> fields = new ArrayList<>();
    /** A method per transcribed command, by the name of the method. */
    private final Map<String, String> methods = new LinkedHashMap<>();
    /** Subcommands of the root by name, mapped to the method that builds each. */
    private final Map<String, String> subcommands = new LinkedHashMap<>();
    private final List<String> skipped = new ArrayList<>();

    CommandModelSource(String packageName, String className) {
        this.packageName = packageName;
        this.className = className;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3 || !args[1].contains("#")) {
            throw new IllegalArgumentException(
                    "usage: CommandModelSource <source dir> <class>#<static method> <simple class name>");
        }
        String[] factory = args[1].split("#", 2);
        Class<?> owner = Class.forName(factory[0], true, Thread.currentThread().getContextClassLoader());
        Method method = owner.getDeclaredMethod(factory[1]);
        method.setAccessible(true);
        CommandLine root = (CommandLine) method.invoke(null);
        CommandModelSource source = new CommandModelSource(owner.getPackageName(), args[2]);
        String text = source.write(root);
        Path file = Path.of(args[0]).resolve(owner.getPackageName().replace('.', '/')).resolve(args[2] + ".java");
        Files.createDirectories(file.getParent());
        writeIfChanged(file, text);
    }

    /** Leaves an unchanged file alone, so that the compiler has nothing to redo. */
    private static void writeIfChanged(Path file, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (Files.exists(file) && Arrays.equals(Files.readAllBytes(file), bytes)) {
            return;
        }
        Files.write(file, bytes);
    }

    /** Why each subcommand left out of the last {@link #write} was, by its name first. */
    List<String> skipped() {
        return List.copyOf(skipped);
    }

    /**
     * The source of the class that builds {@code root} (alone) and those of its subcommands this
     * writer can transcribe. Once an instance: it keeps what it wrote.
     */
    String write(CommandLine root) {
        String rootMethod = command(root.getCommandSpec(), "root", false);
        for (CommandLine sub : new java.util.LinkedHashSet<>(root.getSubcommands().values())) { // once each, not once an alias
            CommandSpec spec = sub.getCommandSpec();
            String name = (String) raw(spec, "name");
            int before = fields.size();
            Map<String, String> methodsBefore = new LinkedHashMap<>(methods);
            try {
                subcommands.put(name, command(spec, "command", true));
            } catch (Unsupported e) {
                fields.subList(before, fields.size()).clear();
                methods.clear();
                methods.putAll(methodsBefore);
                skipped.add(name + ": " + e.getMessage());
            }
        }
        return source(rootMethod);
    }

    private String source(String rootMethod) {
        StringBuilder out = new StringBuilder();
        out.append("package ").append(packageName).append(";\n\n");
        out.append("import picocli.CommandLine;\n");
        out.append("import picocli.CommandLine.Model.ArgGroupSpec;\n");
        out.append("import picocli.CommandLine.Model.CommandSpec;\n");
        out.append("import picocli.CommandLine.Model.IGetter;\n");
        out.append("import picocli.CommandLine.Model.IScope;\n");
        out.append("import picocli.CommandLine.Model.IScoped;\n");
        out.append("import picocli.CommandLine.Model.ISetter;\n");
        out.append("import picocli.CommandLine.Model.ITypeInfo;\n");
        out.append("import picocli.CommandLine.Model.OptionSpec;\n");
        out.append("import picocli.CommandLine.Model.PositionalParamSpec;\n\n");
        out.append("/**\n * Written by parley-build-tools' CommandModelSource from the annotated commands; do not edit.\n");
        if (!skipped.isEmpty()) {
            out.append(" * Left to their annotations:\n");
            skipped.forEach(reason -> out.append(" * - ").append(reason.replace("*/", "* /")).append('\n'));
        }
        out.append(" */\n");
        out.append("@SuppressWarnings({\"unchecked\", \"rawtypes\", \"deprecation\"})\n");
        out.append("final class ").append(className).append(" implements PrebuiltCommands {\n");
        out.append("    @Override\n    public CommandLine root() {\n        return ").append(rootMethod).append("();\n    }\n\n");
        out.append("    @Override\n    public CommandLine subcommand(String name) {\n        return switch (name) {\n");
        subcommands.forEach((name, method) -> out.append("            case ").append(literal(name))
                .append(" -> ").append(method).append("();\n"));
        out.append("            default -> null;\n        };\n    }\n");
        methods.values().forEach(out::append);
        out.append(binding());
        out.append("}\n");
        return out.toString();
    }

    /** The method that builds {@code spec} (and its subcommands, when asked); returns its name. */
    private String command(CommandSpec spec, String prefix, boolean withSubcommands) {
        String name = prefix + methods.size();
        methods.put(name, ""); // reserve the name before the subcommands take theirs
        Object user = spec.userObject();
        Class<?> type = user.getClass();
        requireAccessible(type, where(spec));
        StringBuilder out = new StringBuilder();
        out.append("\n    /** {@code ").append(where(spec)).append("} */\n");
        out.append("    private static CommandLine ").append(name).append("() {\n");
        out.append("        ").append(typeName(type)).append(" user = new ").append(typeName(type)).append("();\n");
        out.append("        CommandSpec spec = CommandSpec.wrapWithoutInspection(user);\n");
        out.append("        IScope userScope = new Holder(user);\n");
        out.append("        spec.name(").append(literal((String) raw(spec, "name"))).append(");\n");
        @SuppressWarnings("unchecked")
        java.util.Set<String> aliases = (java.util.Set<String>) raw(spec, "aliases");
        if (!aliases.isEmpty()) {
            out.append("        spec.aliases(").append(literals(aliases.toArray(String[]::new))).append(");\n");
        }
        String[] version = (String[]) raw(spec, "version");
        if (version != null && version.length > 0 && spec.versionProvider() == null) {
            out.append("        spec.version(").append(literals(version)).append(");\n");
        }
        if (spec.versionProvider() != null) {
            out.append("        spec.versionProvider(").append(construct(spec.versionProvider(), spec)).append(");\n");
        }
        requireDefaults(spec);
        usage(spec.usageMessage(), out);

        Map<Object, String> scopes = new LinkedHashMap<>();
        scopes.put(user, "user");
        for (Map.Entry<String, CommandSpec> mixin : spec.mixins().entrySet()) {
            if (mixin.getKey().equals(STANDARD_HELP)) {
                continue;
            }
            Object instance = mixin.getValue().userObject();
            requireAccessible(instance.getClass(), where(spec));
            Field declared = field(spec.mixinAnnotatedElements().get(mixin.getKey()), spec);
            String variable = "mixin" + scopes.size();
            out.append("        ").append(typeName(instance.getClass())).append(' ').append(variable)
                    .append(" = new ").append(typeName(instance.getClass())).append("();\n");
            out.append("        ").append(access(declared, "user")).append(" = ").append(variable).append(";\n");
            for (IAnnotatedElement element : mixin.getValue().specElements()) {
                Spec.Target target = element.getAnnotation(Spec.class).value();
                if (target != Spec.Target.MIXEE) {
                    throw new Unsupported(where(spec) + ": @Spec(" + target + ") in a mixin");
                }
                out.append("        ").append(access(field(element, spec), variable)).append(" = spec;\n");
            }
            if (!mixin.getValue().mixins().isEmpty() || !mixin.getValue().argGroups().isEmpty()) {
                throw new Unsupported(where(spec) + ": a mixin with mixins or groups of its own");
            }
            out.append("        IScope ").append(variable).append("Scope = new Holder(").append(variable).append(");\n");
            scopes.put(instance, variable);
        }
        for (ArgSpec arg : spec.args()) {
            if (arg.group() == null) {
                String object = objectOf(arg, scopes, spec);
                out.append("        spec.add").append(arg.isOption() ? "Option" : "Positional").append('(')
                        .append(arg(arg, object, object + "Scope", spec)).append(");\n");
            }
        }
        for (ArgGroupSpec group : spec.argGroups()) {
            StringBuilder declarations = new StringBuilder();
            String expression = group(group, null, scopes, spec, declarations);
            out.append(declarations).append("        spec.addArgGroup(").append(expression).append(");\n");
        }
        for (IAnnotatedElement element : spec.specElements()) {
            if (element.getAnnotation(Spec.class).value() == Spec.Target.MIXEE) {
                throw new Unsupported(where(spec) + ": @Spec(MIXEE) outside a mixin");
            }
            out.append("        ").append(access(field(element, spec), "user")).append(" = spec;\n");
        }
        if (!spec.parentCommandElements().isEmpty() || !spec.unmatchedArgsBindings().isEmpty()) {
            throw new Unsupported(where(spec) + ": @ParentCommand or @Unmatched");
        }
        out.append("        CommandLine line = new CommandLine(spec);\n");
        if (withSubcommands) {
            for (CommandLine sub : new java.util.LinkedHashSet<>(spec.subcommands().values())) {
                CommandSpec subSpec = sub.getCommandSpec();
                out.append("        line.addSubcommand(").append(literal((String) raw(subSpec, "name"))).append(", ")
                        .append(command(subSpec, prefix, true)).append("());\n");
            }
        }
        out.append("        return line;\n    }\n");
        methods.put(name, out.toString());
        return name;
    }

    /** The command's names from the root, as declared. */
    private static String where(CommandSpec spec) {
        String name = (String) raw(spec, "name");
        return spec.parent() == null ? name : where(spec.parent()) + " " + name;
    }

    /** Settings of a command this writer does not transcribe must have their defaults. */
    private static void requireDefaults(CommandSpec spec) {
        CommandSpec plain = CommandSpec.create();
        Map<String, Boolean> same = new LinkedHashMap<>();
        same.put("defaultValueProvider", spec.defaultValueProvider() == null);
        same.put("modelTransformer", spec.modelTransformer() == plain.modelTransformer());
        same.put("preprocessor", spec.preprocessor().getClass() == plain.preprocessor().getClass());
        same.put("helpCommand", !spec.helpCommand());
        same.put("resourceBundle", spec.resourceBundleBaseName() == null);
        same.put("subcommandsRepeatable", spec.subcommandsRepeatable() == plain.subcommandsRepeatable());
        same.put("interpolateVariables", spec.interpolateVariables() == plain.interpolateVariables());
        same.put("exitCodes", spec.exitCodeOnSuccess() == plain.exitCodeOnSuccess()
                && spec.exitCodeOnUsageHelp() == plain.exitCodeOnUsageHelp()
                && spec.exitCodeOnVersionHelp() == plain.exitCodeOnVersionHelp()
                && spec.exitCodeOnInvalidInput() == plain.exitCodeOnInvalidInput()
                && spec.exitCodeOnExecutionException() == plain.exitCodeOnExecutionException());
        same.forEach((setting, isDefault) -> {
            if (!isDefault) {
                throw new Unsupported(where(spec) + ": the command setting " + setting);
            }
        });
    }

    /** The usage settings picocli keeps as written (before variables are filled in), set the same way. */
    private static void usage(UsageMessageSpec usage, StringBuilder out) {
        for (Field field : UsageMessageSpec.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) || Modifier.isFinal(field.getModifiers())) {
                continue;
            }
            Object value = raw(usage, field.getName());
            switch (field.getName()) {
                case "helpFactory", "sectionKeys", "helpSectionRendererMap", "messages", "cachedTerminalWidth" -> {
                    continue; // picocli's own defaults, or a cache
                }
                default -> {
                }
            }
            if (value == null) {
                continue;
            }
            String argument;
            if (value instanceof String[] lines) {
                argument = array(lines);
            } else if (value instanceof String text) {
                argument = literal(text);
            } else if (value instanceof Boolean || value instanceof Integer) {
                argument = value.toString();
            } else if (value instanceof Character c) {
                argument = "'" + (c == '\'' ? "\\'" : c == '\\' ? "\\\\" : c.toString()) + "'";
            } else {
                throw new Unsupported("usage setting " + field.getName() + " = " + value);
            }
            out.append("        spec.usageMessage().").append(field.getName()).append('(').append(argument).append(");\n");
        }
    }

    /**
     * The builder expression of {@code group}, its scopes declared in {@code declarations} first.
     * Its object is set through {@code holder}: the scope of the command or mixin that declares
     * it, or, for a subgroup, of the group around it, whose object picocli makes (and swaps into
     * that scope) before the subgroup's.
     */
    private String group(ArgGroupSpec group, String holder, Map<Object, String> scopes, CommandSpec spec,
            StringBuilder declarations) {
        if (!group.specElements().isEmpty() || group.typeInfo() == null || group.typeInfo().isMultiValue()) {
            throw new Unsupported(where(spec) + ": a group with @Spec, or of many objects");
        }
        Class<?> type = group.typeInfo().getType();
        requireAccessible(type, where(spec));
        Field declared = (Field) raw(group.setter(), "field");
        int index = bind(declared, spec);
        String scope = "group" + scopes.size() + "Scope";
        scopes.put(group, scope);
        String setter = holder != null ? holder : objectOf(declared, scopes, spec) + "Scope";
        declarations.append("        IScope ").append(scope).append(" = new Holder(null);\n");
        StringBuilder out = new StringBuilder("ArgGroupSpec.builder()");
        out.append(".exclusive(").append(group.exclusive()).append(')');
        out.append(".multiplicity(").append(literal(group.multiplicity().originalValue())).append(')');
        out.append(".validate(").append(group.validate()).append(')');
        out.append(".order(").append(group.order()).append(')');
        String heading = (String) raw(group, "heading");
        if (heading != null) {
            out.append(".heading(").append(literal(heading)).append(')');
        }
        if (group.headingKey() != null) {
            out.append(".headingKey(").append(literal(group.headingKey())).append(')');
        }
        out.append("\n                .typeInfo(typeOf(").append(typeName(type)).append(".class))");
        out.append("\n                .getter(new Binding(").append(index).append(", ").append(setter).append("))")
                .append(".setter(new Binding(").append(index).append(", ").append(setter).append("))")
                .append(".scope(").append(setter).append(')');
        for (ArgSpec arg : group.args()) {
            out.append("\n                .addArg(").append(arg(arg, "new " + typeName(type) + "()", scope, spec)).append(')');
        }
        for (ArgGroupSpec subgroup : group.subgroups()) {
            out.append("\n                .addSubgroup(").append(group(subgroup, scope, scopes, spec, declarations))
                    .append(')');
        }
        return out.append(".build()").toString();
    }

    /**
     * The builder expression of one option or positional parameter. {@code object} is an
     * expression of the object that holds its field now, read for the initial value picocli resets
     * the field to before each parse; {@code scope} the variable of the scope the field is read
     * and written through: that object's, or, in a group, the group's, whose object picocli makes
     * when the group is matched. The standard help options have neither: no one reads their fields.
     */
    private String arg(ArgSpec arg, String object, String scope, CommandSpec spec) {
        if (!(arg.userObject() instanceof Field field)) {
            throw new Unsupported(where(spec) + ": " + arg.userObject() + " is not a field");
        }
        boolean standardHelp = field.getDeclaringClass() == STANDARD_HELP_MIXIN;
        StringBuilder out = new StringBuilder();
        if (arg instanceof OptionSpec option) {
            OptionSpec.Builder builder = option.toBuilder();
            out.append("OptionSpec.builder(").append(literals(builder.names())).append(')');
            if (builder.usageHelp()) {
                out.append(".usageHelp(true)");
            }
            if (builder.versionHelp()) {
                out.append(".versionHelp(true)");
            }
            if (builder.help()) {
                out.append(".help(true)");
            }
            if (builder.negatable()) {
                out.append(".negatable(true)");
            }
            if (builder.fallbackValue() != null && !builder.fallbackValue().isEmpty()) {
                out.append(".fallbackValue(").append(literal(builder.fallbackValue())).append(')');
            }
            if (builder.order() != -1) {
                out.append(".order(").append(builder.order()).append(')');
            }
        } else {
            PositionalParamSpec.Builder builder = ((PositionalParamSpec) arg).toBuilder();
            out.append("PositionalParamSpec.builder()");
            if (!builder.index().isUnspecified()) {
                out.append(".index(").append(literal(builder.index().originalValue())).append(')');
            }
        }
        if (arg.interactive() || arg.echo() || !isEmpty(arg.prompt()) || arg.parameterConsumer() != null
                || !arg.preprocessor().getClass().getSimpleName().equals("NoOpParameterPreprocessor")
                || arg.inherited() || arg.scopeType() != ScopeType.LOCAL) {
            throw new Unsupported(where(spec) + " " + arg.paramLabel()
                    + ": interactive, a consumer, a preprocessor or an inherited scope");
        }
        String descriptionKey = (String) raw(arg, "descriptionKey");
        if (descriptionKey != null) {
            out.append(".descriptionKey(").append(literal(descriptionKey)).append(')');
        }
        out.append("\n                    .description(").append(array((String[]) raw(arg, "description"))).append(')');
        String paramLabel = (String) raw(arg, "paramLabel");
        if (paramLabel != null) {
            out.append(".paramLabel(").append(literal(paramLabel)).append(')');
        }
        // As declared: an exclusive group marks its arguments required when it is built, as it will
        // when the written group is; a positional parameter is required when its arity asks for a value.
        boolean required = arg instanceof OptionSpec ? field.getAnnotation(CommandLine.Option.class).required()
                : arg.required();
        if (required) {
            out.append(".required(true)");
        }
        if (arg.hidden()) {
            out.append(".hidden(true)");
        }
        if (arg.hideParamSyntax()) {
            out.append(".hideParamSyntax(true)");
        }
        if (!arg.arity().isUnspecified()) {
            out.append(".arity(").append(literal(arg.arity().originalValue())).append(')');
        }
        String splitRegex = (String) raw(arg, "splitRegex");
        if (!isEmpty(splitRegex)) {
            out.append(".splitRegex(").append(literal(splitRegex)).append(')');
        }
        String splitLabel = (String) raw(arg, "splitRegexSynopsisLabel");
        if (!isEmpty(splitLabel)) {
            out.append(".splitRegexSynopsisLabel(").append(literal(splitLabel)).append(')');
        }
        String defaultValue = (String) raw(arg, "defaultValue");
        if (defaultValue != null) {
            out.append(".defaultValue(").append(literal(defaultValue)).append(')');
        }
        if (!Objects.equals(raw(arg, "mapFallbackValue"), raw(PLAIN_OPTION, "mapFallbackValue"))) {
            throw new Unsupported(where(spec) + " " + arg.paramLabel() + ": a map fallback value");
        }
        if (arg.showDefaultValue() != CommandLine.Help.Visibility.ON_DEMAND) {
            out.append(".showDefaultValue(CommandLine.Help.Visibility.").append(arg.showDefaultValue()).append(')');
        }
        out.append("\n                    .type(").append(typeName(arg.type())).append(".class)");
        out.append(".auxiliaryTypes(").append(Arrays.stream(arg.auxiliaryTypes())
                .map(t -> typeName(t) + ".class").collect(Collectors.joining(", "))).append(')');
        if (arg.converters().length > 0) {
            out.append(".converters(").append(Arrays.stream(arg.converters()).map(c -> construct(c, spec))
                    .collect(Collectors.joining(", "))).append(')');
        }
        Iterable<String> candidates = arg.completionCandidates();
        if (candidates != null && candidates.getClass().getPackageName().equals(packageName)) {
            out.append(".completionCandidates(").append(construct(candidates, spec)).append(')');
        }
        out.append(".withToString(").append(literal(arg.toString())).append(')');
        if (standardHelp) {
            out.append(".initialValue(false)"); // the mixin's flag, which no one reads: picocli's parse result says
        } else {
            int index = bind(field, spec);
            out.append("\n                    .initialValue(").append(access(field, object)).append(')');
            out.append("\n                    .getter(new Binding(").append(index).append(", ").append(scope)
                    .append(")).setter(new Binding(").append(index).append(", ").append(scope)
                    .append(")).scope(").append(scope).append(')');
        }
        return out.append(".build()").toString();
    }

    private String objectOf(ArgSpec arg, Map<Object, String> scopes, CommandSpec spec) {
        if (!(arg.userObject() instanceof Field field)) {
            throw new Unsupported(where(spec) + ": " + arg.userObject() + " is not a field");
        }
        return field.getDeclaringClass() == STANDARD_HELP_MIXIN ? null : objectOf(field, scopes, spec);
    }

    /** The variable of the object among {@code scopes} whose class declares (or inherits) {@code field}. */
    private static String objectOf(Field field, Map<Object, String> scopes, CommandSpec spec) {
        for (Map.Entry<Object, String> scope : scopes.entrySet()) {
            if (!(scope.getKey() instanceof ArgGroupSpec) && field.getDeclaringClass().isInstance(scope.getKey())) {
                return scope.getValue();
            }
        }
        throw new Unsupported(where(spec) + ": no object holds " + field);
    }

    private int bind(Field field, CommandSpec spec) {
        requireSettable(field, spec);
        requireAccessible(field.getDeclaringClass(), where(spec));
        boxed(field.getGenericType()); // a type the switch cannot cast to fails here, for this command alone
        int index = fields.indexOf(field);
        if (index < 0) {
            fields.add(field);
            index = fields.size() - 1;
        }
        return index;
    }

    private Field field(IAnnotatedElement element, CommandSpec spec) {
        if (!(element.userObject() instanceof Field field)) {
            throw new Unsupported(where(spec) + ": " + element.getToString() + " is not a field");
        }
        requireSettable(field, spec);
        return field;
    }

    /** The written code assigns the field itself, from the written class's package. */
    private static void requireSettable(Field field, CommandSpec spec) {
        if (Modifier.isPrivate(field.getModifiers()) || Modifier.isFinal(field.getModifiers())) {
            throw new Unsupported(where(spec) + ": " + field + " is private or final");
        }
    }

    private String access(Field field, String object) {
        return "((" + typeName(field.getDeclaringClass()) + ") " + object + ")." + field.getName();
    }

    /** {@code new X()} for an object picocli made from a class the annotations name. */
    private String construct(Object made, CommandSpec spec) {
        Class<?> type = made.getClass();
        requireAccessible(type, where(spec));
        try {
            if (Modifier.isPrivate(type.getDeclaredConstructor().getModifiers())) {
                throw new Unsupported(where(spec) + ": " + type.getName() + "'s constructor is private");
            }
        } catch (NoSuchMethodException e) {
            throw new Unsupported(where(spec) + ": " + type.getName() + " has no constructor without arguments");
        }
        return "new " + typeName(type) + "()";
    }

    private void requireAccessible(Class<?> type, String command) {
        for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
            if (Modifier.isPrivate(c.getModifiers()) || c.isAnonymousClass() || c.isLocalClass()
                    || !c.getPackageName().equals(packageName) && !Modifier.isPublic(c.getModifiers())) {
                throw new Unsupported(command + ": " + type.getName() + " cannot be reached from " + packageName);
            }
        }
        if (!type.getPackageName().equals(packageName)) {
            throw new Unsupported(command + ": " + type.getName() + " is outside " + packageName);
        }
    }

    /** The one class that reads and writes every bound field, by index, through the scope's current object. */
    private String binding() {
        StringBuilder out = new StringBuilder();
        out.append("\n    /** The type of a group's object as picocli describes it (its RuntimeTypeInfo is not public; an option's is). */\n");
        out.append("    private static ITypeInfo typeOf(Class<?> type) {\n");
        out.append("        return OptionSpec.builder(\"--type\").type(type).build().typeInfo();\n    }\n");
        out.append("\n    /** Holds the object whose fields a command's arguments set; picocli swaps a group's on each match. */\n");
        out.append("    private static final class Holder implements IScope {\n");
        out.append("        private Object value;\n\n");
        out.append("        Holder(Object value) {\n            this.value = value;\n        }\n\n");
        out.append("        @Override\n        public <T> T get() {\n            return (T) value;\n        }\n\n");
        out.append("        @Override\n        public <T> T set(T value) {\n            T old = (T) this.value;\n");
        out.append("            this.value = value;\n            return old;\n        }\n    }\n");
        out.append("\n    /** A field, by index, of the object its scope holds. */\n");
        out.append("    private record Binding(int field, IScope scope) implements IGetter, ISetter, IScoped {\n");
        out.append("        @Override\n        public IScope getScope() {\n            return scope;\n        }\n\n");
        out.append("        @Override\n        public <T> T get() throws Exception {\n");
        out.append("            Object o = scope.get();\n            return (T) switch (field) {\n");
        for (int i = 0; i < fields.size(); i++) {
            Field f = fields.get(i);
            out.append("                case ").append(i).append(" -> (Object) ").append(access(f, "o")).append(";\n");
        }
        out.append("                default -> throw new IllegalStateException(\"no field \" + field);\n");
        out.append("            };\n        }\n\n");
        out.append("        @Override\n        public <T> T set(T value) throws Exception {\n");
        out.append("            T old = get();\n            Object o = scope.get();\n            switch (field) {\n");
        for (int i = 0; i < fields.size(); i++) {
            Field f = fields.get(i);
            out.append("                case ").append(i).append(" -> ").append(access(f, "o")).append(" = (")
                    .append(boxed(f.getGenericType())).append(") value;\n");
        }
        out.append("                default -> throw new IllegalStateException(\"no field \" + field);\n");
        out.append("            }\n            return old;\n        }\n    }\n");
        return out.toString();
    }

    private static String boxed(Type type) {
        if (type instanceof Class<?> c && c.isPrimitive()) {
            return switch (c.getName()) {
                case "boolean" -> "Boolean";
                case "int" -> "Integer";
                case "long" -> "Long";
                case "double" -> "Double";
                default -> throw new Unsupported("a field of type " + c);
            };
        }
        return typeName(type);
    }

    private static String typeName(Type type) {
        if (type instanceof Class<?> c) {
            if (c.isArray()) {
                return typeName(c.getComponentType()) + "[]";
            }
            return Objects.requireNonNull(c.getCanonicalName(), () -> c + " has no canonical name");
        }
        if (type instanceof ParameterizedType p) {
            return typeName(p.getRawType()) + Arrays.stream(p.getActualTypeArguments()).map(CommandModelSource::typeName)
                    .collect(Collectors.joining(", ", "<", ">"));
        }
        throw new Unsupported("a field of type " + type);
    }

    private static boolean isEmpty(String text) {
        return text == null || text.isEmpty();
    }

    /** An array expression: an empty one as varargs would call the getter of the same name instead. */
    private static String array(String[] texts) {
        return "new String[] {" + literals(texts) + "}";
    }

    private static String literals(String[] texts) {
        return Arrays.stream(texts).map(CommandModelSource::literal).collect(Collectors.joining(", "));
    }

    private static String literal(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    /** A private field of a picocli model object: the value as written, before picocli fills in variables. */
    private static Object raw(Object model, String name) {
        for (Class<?> c = model.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field field = c.getDeclaredField(name);
                field.setAccessible(true);
                return field.get(model);
            } catch (NoSuchFieldException e) {
                // declared further up
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("cannot read picocli's " + name, e);
            }
        }
        throw new IllegalStateException("this picocli's " + model.getClass().getName() + " has no field " + name);
    }

    private static Class<?> standardHelpMixinClass() {
        try {
            return Class.forName("picocli.CommandLine$AutoHelpMixin");
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("this picocli has no standard help mixin", e);
        }
    }

    /** A command this writer cannot transcribe; picocli builds it from its annotations at run time. */
    static final class Unsupported extends RuntimeException {
        Unsupported(String message) {
            super(message);
        }
    }
}
