package dev.parley.server.policy;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileOptions;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.Descriptors;
import dev.cel.bundle.Cel;
import dev.cel.bundle.CelBuilder;
import dev.cel.bundle.CelFactory;
import dev.cel.checker.CelStandardDeclarations;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationException;
import dev.cel.common.CelValidationResult;
import dev.cel.common.exceptions.CelInvalidArgumentException;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.StructTypeReference;
import dev.cel.extensions.CelOptionalLibrary;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelFunctionOverload;
import dev.cel.runtime.CelStandardFunctions;
import dev.cel.runtime.RuntimeHelpers;
import dev.parley.core.PolicyRules;
import dev.parley.mcp.JsonFailures;
import dev.parley.server.wire.Json;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a policy rules file (JSON or YAML) and compiles every rule with CEL. Its {@code rules}
 * decide sends, type-checked against the variables {@code sender}, {@code target} (id, kind,
 * labels, parent, group) and {@code envelope} (kind, textSize, meta, topic); its
 * {@code permissions} decide agents' permission requests, against {@code tool} and {@code kind}
 * (strings), {@code input} (the tool's input, a map) and {@code node} (the asking node, as
 * {@code sender}). Each rule must be a bool expression; a file with any rule that fails is
 * refused whole, with every problem listed.
 */
public final class PolicyCompiler {
    static final int MAX_FILE_BYTES = 1 << 20;
    static final int MAX_RULES = 1000;
    static final int MAX_EXPRESSION_CHARS = 4096;
    private static final Pattern RULE_NAME = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$");
    private static final Set<String> FILE_FIELDS = Set.of("rules", "permissions");
    private static final Set<String> RULE_FIELDS = Set.of("name", "effect", "when");

    private static final String PACKAGE = "parley.policy";
    static final Descriptors.Descriptor NODE;
    static final Descriptors.Descriptor ENVELOPE;

    static {
        DescriptorProto node = DescriptorProto.newBuilder().setName("Node")
                .addField(scalar("id", 1, FieldDescriptorProto.Type.TYPE_STRING))
                .addField(scalar("kind", 2, FieldDescriptorProto.Type.TYPE_STRING))
                .addField(map("labels", 3, "Node", "LabelsEntry"))
                .addField(scalar("parent", 4, FieldDescriptorProto.Type.TYPE_STRING))
                .addField(scalar("group", 5, FieldDescriptorProto.Type.TYPE_STRING).toBuilder()
                        .setLabel(FieldDescriptorProto.Label.LABEL_REPEATED))
                .addNestedType(stringMapEntry("LabelsEntry"))
                .build();
        DescriptorProto envelope = DescriptorProto.newBuilder().setName("Envelope")
                .addField(scalar("kind", 1, FieldDescriptorProto.Type.TYPE_STRING))
                .addField(scalar("textSize", 2, FieldDescriptorProto.Type.TYPE_INT64))
                .addField(map("meta", 3, "Envelope", "MetaEntry"))
                .addField(scalar("topic", 4, FieldDescriptorProto.Type.TYPE_STRING))
                .addNestedType(stringMapEntry("MetaEntry"))
                .build();
        // The Java options name no class (none is generated): CEL looks for one at every read of a
        // variable, and with them spelled out it finds the name without deriving it from the file.
        FileOptions java = FileOptions.newBuilder().setJavaPackage("dev.parley.server.policy.proto")
                .setJavaOuterClassname("PolicyProto").setJavaMultipleFiles(true).build();
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName("parley/policy.proto").setPackage(PACKAGE)
                .setSyntax("proto3").setOptions(java).addMessageType(node).addMessageType(envelope).build();
        try {
            Descriptors.FileDescriptor built = Descriptors.FileDescriptor.buildFrom(file, new Descriptors.FileDescriptor[0]);
            NODE = built.findMessageTypeByName("Node");
            ENVELOPE = built.findMessageTypeByName("Envelope");
        } catch (Descriptors.DescriptorValidationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

    /** A file's two sections, as written: the rules over sends and those over permission requests. */
    public record Document(List<RuleSpec> rules, List<RuleSpec> permissions) {
    }

    /** A file compiled: both sections, under one version. */
    record Compiled(CelRuleset sends, PermissionRuleset permissions) {
    }

    /** One rule as written. */
    public record RuleSpec(String name, PolicyRules.Effect effect, String when) {
    }

    /** What is wrong with a file: the rule (by position and name, when known) and why. */
    public record Problem(Optional<Integer> index, Optional<String> rule, String error) {
    }

    /** A file refused whole. */
    static final class Refused extends Exception {
        private final List<Problem> problems;

        Refused(String message, List<Problem> problems) {
            super(message, null, false, false);
            this.problems = List.copyOf(problems);
        }

        List<Problem> problems() {
            return problems;
        }
    }

    private final Cel cel = environment()
            .addVar("sender", StructTypeReference.create(NODE.getFullName()))
            .addVar("target", StructTypeReference.create(NODE.getFullName()))
            .addVar("envelope", StructTypeReference.create(ENVELOPE.getFullName()))
            .build();

    private final Cel permissionCel = environment()
            .addVar("tool", SimpleType.STRING)
            .addVar("kind", SimpleType.STRING)
            .addVar("input", MapType.create(SimpleType.STRING, SimpleType.DYN))
            .addVar("node", StructTypeReference.create(NODE.getFullName()))
            .build();

    /** Rules' regular expressions, compiled once and kept across evaluations (and reloads). */
    private static final Re2Patterns RULE_PATTERNS = new Re2Patterns();

    /**
     * What both sections' rules may use: the standard library, optionals, bounded comprehensions.
     * Every function must be pure (no clock, no randomness): CelRuleset reuses a rule's result
     * for every send with the same facts.
     */
    private static CelBuilder environment() {
        CelOptions options = CelOptions.current()
                .enableOptionalSyntax(true)
                .comprehensionMaxIterations(10_000)
                .maxExpressionCodePointSize(MAX_EXPRESSION_CHARS)
                .build();
        return CelFactory.standardCelBuilder()
                .setOptions(options)
                .setStandardEnvironmentEnabled(false) // as standard, but for the runtime's matches()
                .setStandardDeclarations(CelStandardDeclarations.newBuilder().build())
                .setStandardFunctions(CelStandardFunctions.newBuilder()
                        .excludeFunctions(CelStandardFunctions.StandardFunction.MATCHES).build())
                .addFunctionBindings(CelFunctionBinding.from("matches", String.class, String.class, matches(options)),
                        CelFunctionBinding.from("matches_string", String.class, String.class, matches(options)))
                .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
                .addCompilerLibraries(CelOptionalLibrary.INSTANCE)
                .addRuntimeLibraries(CelOptionalLibrary.INSTANCE)
                .addMessageTypes(NODE, ENVELOPE);
    }

    /**
     * CEL's {@code matches()} with the compiled pattern kept: the standard one compiles the
     * regex at every evaluation. A regex not seen before goes through CEL's own function, so
     * its checks and errors are CEL's; once it has passed, the kept pattern answers alike.
     */
    private static CelFunctionOverload.Binary<String, String> matches(CelOptions options) {
        return (text, regex) -> {
            try {
                Optional<com.google.re2j.Pattern> known = RULE_PATTERNS.known(regex);
                if (known.isEmpty()) {
                    boolean matched = RuntimeHelpers.matches(text, regex, options);
                    RULE_PATTERNS.keep(regex);
                    return matched;
                }
                var matcher = known.get().matcher(text);
                return options.enableRegexPartialMatch() ? matcher.find() : matcher.matches();
            } catch (RuntimeException e) {
                throw new CelInvalidArgumentException(e);
            }
        };
    }

    /** Reads the rules of a file; {@code fileName} picks the syntax ({@code .json}: JSON, anything else: YAML). */
    Document parse(byte[] bytes, String fileName) throws Refused {
        if (bytes.length > MAX_FILE_BYTES) {
            throw refused("the policy file is larger than " + MAX_FILE_BYTES + " bytes");
        }
        boolean json = fileName.toLowerCase(Locale.ROOT).endsWith(".json");
        JsonNode root;
        try {
            root = (json ? Json.MAPPER : YAML).readTree(bytes);
        } catch (java.io.IOException e) {
            throw refused("the policy file is not valid " + (json ? "JSON" : "YAML") + ": " + JsonFailures.explain(e));
        }
        if (!(root instanceof ObjectNode object)) {
            throw refused("the policy file must be an object with a list \"rules\"");
        }
        for (String field : (Iterable<String>) object::fieldNames) {
            if (!FILE_FIELDS.contains(field)) {
                throw refused("unknown field \"" + field + "\" in the policy file; it has only \"rules\" and"
                        + " \"permissions\"");
            }
        }
        JsonNode rules = object.get("rules");
        if (rules == null || !rules.isArray()) {
            throw refused("the policy file must have a list \"rules\"");
        }
        JsonNode permissions = object.path("permissions");
        if (!permissions.isMissingNode() && !permissions.isArray()) {
            throw refused("\"permissions\" must be a list of rules");
        }
        if (rules.size() + permissions.size() > MAX_RULES) {
            throw refused("the policy file has " + (rules.size() + permissions.size()) + " rules; at most " + MAX_RULES
                    + " are allowed");
        }
        List<Problem> problems = new ArrayList<>();
        Document document = new Document(section(rules, "", problems), section(permissions, "permissions: ", problems));
        if (!problems.isEmpty()) {
            throw new Refused(summary(problems), problems);
        }
        return document;
    }

    /** The rules of one section; what is wrong with them goes to {@code problems}, each error after {@code label}. */
    private static List<RuleSpec> section(JsonNode rules, String label, List<Problem> problems) {
        List<RuleSpec> specs = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < rules.size(); i++) {
            JsonNode rule = rules.get(i);
            Optional<String> name = Optional.ofNullable(rule.get("name")).filter(JsonNode::isTextual).map(JsonNode::textValue);
            try {
                RuleSpec spec = rule(rule);
                if (!names.add(spec.name())) {
                    throw new IllegalArgumentException("the name " + spec.name() + " is used by an earlier rule");
                }
                specs.add(spec);
            } catch (IllegalArgumentException e) {
                problems.add(new Problem(Optional.of(i), name, label + e.getMessage()));
            }
        }
        return specs;
    }

    /** Compiles and type-checks every rule of both sections; all must be bool. */
    Compiled compile(Document document) throws Refused {
        List<Problem> problems = new ArrayList<>();
        List<CelRuleset.CompiledRule> sends = compile(cel, document.rules(), "", problems);
        List<CelRuleset.CompiledRule> permissions = compile(permissionCel, document.permissions(), "permissions: ",
                problems);
        if (!problems.isEmpty()) {
            throw new Refused(summary(problems), problems);
        }
        String version = version(document);
        return new Compiled(new CelRuleset(version, sends), new PermissionRuleset(new CelRuleset(version, permissions)));
    }

    private static List<CelRuleset.CompiledRule> compile(Cel env, List<RuleSpec> specs, String label,
                                                         List<Problem> problems) {
        List<CelRuleset.CompiledRule> compiled = new ArrayList<>();
        for (int i = 0; i < specs.size(); i++) {
            RuleSpec spec = specs.get(i);
            try {
                CelAbstractSyntaxTree ast = check(env, spec.when());
                compiled.add(new CelRuleset.CompiledRule(spec.name(), spec.effect(), env.createProgram(ast),
                        SendFact.readBy(ast)));
            } catch (IllegalArgumentException e) {
                problems.add(new Problem(Optional.of(i), Optional.of(spec.name()), label + e.getMessage()));
            } catch (CelEvaluationException e) {
                problems.add(new Problem(Optional.of(i), Optional.of(spec.name()), label + "cannot be planned: "
                        + e.getMessage()));
            }
        }
        return compiled;
    }

    /** Parses and compiles a whole file. */
    Compiled load(byte[] bytes, String fileName) throws Refused {
        return compile(parse(bytes, fileName));
    }

    /** The version of a rule set: a hash of its canonical form, {@code p-} and 12 hex digits. */
    static String version(Document document) {
        var canonical = Json.array();
        for (RuleSpec spec : document.rules()) {
            canonical.addObject().put("name", spec.name()).put("effect", spec.effect().wire()).put("when", spec.when());
        }
        // Permission rules join the hash only when there are some: a file without them keeps its version.
        if (!document.permissions().isEmpty()) {
            var permissions = canonical.addObject().putArray("permissions");
            for (RuleSpec spec : document.permissions()) {
                permissions.addObject().put("name", spec.name()).put("effect", spec.effect().wire())
                        .put("when", spec.when());
            }
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(Json.bytes(canonical));
            return "p-" + HexFormat.of().formatHex(digest, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    private static CelAbstractSyntaxTree check(Cel env, String expression) {
        CelValidationResult result = env.compile(expression);
        if (result.hasError()) {
            throw new IllegalArgumentException(result.getErrorString());
        }
        CelAbstractSyntaxTree ast;
        try {
            ast = result.getAst();
        } catch (CelValidationException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
        if (!ast.getResultType().equals(SimpleType.BOOL)) {
            throw new IllegalArgumentException("the expression is of type " + ast.getResultType().name()
                    + "; a rule's \"when\" must be bool");
        }
        return ast;
    }

    private static RuleSpec rule(JsonNode rule) {
        if (!(rule instanceof ObjectNode object)) {
            throw new IllegalArgumentException("a rule must be an object with name, effect and when");
        }
        for (String field : (Iterable<String>) object::fieldNames) {
            if (!RULE_FIELDS.contains(field)) {
                throw new IllegalArgumentException("unknown field \"" + field + "\"; a rule has name, effect and when");
            }
        }
        String name = text(object, "name");
        if (!RULE_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("name must match " + RULE_NAME.pattern());
        }
        PolicyRules.Effect effect = switch (text(object, "effect")) {
            case "allow" -> PolicyRules.Effect.ALLOW;
            case "deny" -> PolicyRules.Effect.DENY;
            default -> throw new IllegalArgumentException("effect must be allow or deny");
        };
        String when = text(object, "when");
        if (when.isBlank()) {
            throw new IllegalArgumentException("when must be a CEL expression");
        }
        if (when.length() > MAX_EXPRESSION_CHARS) {
            throw new IllegalArgumentException("when is longer than " + MAX_EXPRESSION_CHARS + " characters");
        }
        return new RuleSpec(name, effect, when);
    }

    private static String text(ObjectNode object, String field) {
        JsonNode value = object.get(field);
        if (value == null || !value.isTextual()) {
            throw new IllegalArgumentException("\"" + field + "\" is required and must be a string");
        }
        return value.textValue();
    }

    private static Refused refused(String message) {
        return new Refused(message, List.of(new Problem(Optional.empty(), Optional.empty(), message)));
    }

    private static String summary(List<Problem> problems) {
        Problem first = problems.getFirst();
        String where = first.rule().map(r -> "rule " + r).orElseGet(() -> "rule #" + (first.index().orElse(0) + 1));
        return problems.size() + " rule(s) do not compile; the first, " + where + ": " + firstLine(first.error());
    }

    private static String firstLine(String message) {
        String text = String.valueOf(message);
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }

    private static FieldDescriptorProto scalar(String name, int number, FieldDescriptorProto.Type type) {
        return FieldDescriptorProto.newBuilder().setName(name).setJsonName(name).setNumber(number).setType(type)
                .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL).build();
    }

    private static FieldDescriptorProto map(String name, int number, String message, String entry) {
        return FieldDescriptorProto.newBuilder().setName(name).setJsonName(name).setNumber(number)
                .setType(FieldDescriptorProto.Type.TYPE_MESSAGE).setTypeName("." + PACKAGE + "." + message + "." + entry)
                .setLabel(FieldDescriptorProto.Label.LABEL_REPEATED).build();
    }

    private static DescriptorProto stringMapEntry(String name) {
        return DescriptorProto.newBuilder().setName(name)
                .addField(scalar("key", 1, FieldDescriptorProto.Type.TYPE_STRING))
                .addField(scalar("value", 2, FieldDescriptorProto.Type.TYPE_STRING))
                .setOptions(MessageOptions.newBuilder().setMapEntry(true))
                .build();
    }
}
