package dev.parley.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaException;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.path.PathType;
import dev.parley.core.ApprovalCard;
import dev.parley.core.AuditEntry;
import dev.parley.core.Contracts;
import dev.parley.core.ErrorCode;
import dev.parley.core.JsonText;
import dev.parley.core.ParleyException;
import dev.parley.core.PayloadSchemas;
import dev.parley.core.PolicyRules;
import dev.parley.core.Principal;
import dev.parley.core.SchemaStore;
import dev.parley.core.SendRequest;
import dev.parley.core.SkillReview;
import dev.parley.core.StoredSchema;
import dev.parley.server.metrics.Metrics;
import dev.parley.server.wire.Json;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.InstantSource;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.PatternSyntaxException;

/**
 * Payload schemas: one JSON Schema (2020-12) per envelope kind, kept in the store and
 * compiled in memory. Every envelope a node composes passes {@link #check} once, before
 * anything is written. Schemas never reach outside their document: a {@code $ref} to
 * another resource is refused when the schema is set, and nothing is fetched.
 */
public final class JsonSchemas implements PayloadSchemas, Contracts {
    private static final String DIALECT = "https://json-schema.org/draft/2020-12/schema";
    /** Kinds whose data the hub composes itself: a schema for them would never be asked. */
    private static final Set<String> HUB_KINDS = Set.of("dead_letter", "incident", "task", "task_accept", "task_update",
            "task_complete", "task_failed", "task_canceled", SkillReview.KIND, ApprovalCard.ENVELOPE_KIND);
    private static final ObjectMapper CANONICAL = Json.MAPPER.copy().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

    /** A kind's schema as stored and as compiled. */
    record Entry(StoredSchema stored, Schema compiled) {
    }

    private final SchemaRegistry registry;
    private final Schema metaSchema;
    private final SchemaStore store;
    private final PolicyRules rules;
    private final Metrics metrics;
    private final InstantSource clock;
    private final Map<String, Entry> byKind = new ConcurrentHashMap<>();

    private JsonSchemas(SchemaStore store, PolicyRules rules, Metrics metrics, InstantSource clock) {
        this.store = store;
        this.rules = rules;
        this.metrics = metrics;
        this.clock = clock;
        SchemaRegistryConfig config = SchemaRegistryConfig.builder()
                .pathType(PathType.JSON_POINTER)
                .locale(Locale.ROOT)
                .build();
        this.registry = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12, b -> b
                .schemaRegistryConfig(config)
                .schemaCacheEnabled(false) // each kind's schema stands alone, whatever its $id
                .schemaLoader(loader -> loader.fetchRemoteResources(false)));
        this.metaSchema = registry.getSchema(SchemaLocation.of(DIALECT));
    }

    /** The schemas in {@code store}, compiled; one that no longer compiles stops the hub from starting. */
    public static JsonSchemas load(SchemaStore store, PolicyRules rules, Metrics metrics, InstantSource clock) {
        JsonSchemas schemas = new JsonSchemas(store, rules, metrics, clock);
        for (StoredSchema stored : store.schemas()) {
            try {
                schemas.byKind.put(stored.kind(), new Entry(stored, schemas.compile(Json.MAPPER.readTree(stored.schema().json()))));
            } catch (IOException | ParleyException e) {
                throw new IllegalStateException("the stored schema of kind " + stored.kind() + " does not compile: "
                        + e.getMessage(), e);
            }
        }
        return schemas;
    }

    @Override
    public void check(String kind, Optional<JsonText> data) {
        Entry entry = byKind.get(kind);
        if (entry == null) {
            return;
        }
        if (data.isEmpty()) {
            throw violation(kind, entry, "", "data is required: kind " + kind + " has a schema");
        }
        JsonNode instance;
        try {
            instance = Json.MAPPER.readTree(data.get().json());
        } catch (IOException e) {
            throw new IllegalStateException("data was validated as JSON when it entered", e);
        }
        List<Error> errors = entry.compiled().validate(instance);
        if (!errors.isEmpty()) {
            Error first = errors.getFirst();
            throw violation(kind, entry, first.getInstanceLocation().toString(), first.getMessage());
        }
    }

    @Override
    public void requireUsable(JsonText schema, boolean trusted) {
        contract(schema);
        if (!trusted) {
            try {
                JsonNode document = Json.MAPPER.readTree(schema.json());
                for (String keyword : List.of("pattern", "patternProperties")) {
                    if (!document.findParents(keyword).isEmpty()) {
                        throw invalid("", "a node's contract may not use " + keyword + ": regular expressions would run"
                                + " on the hub against every result (the admin's may)");
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException("the contract compiled, so it is JSON", e);
            }
        }
    }

    @Override
    public Optional<String> breach(JsonText schema, JsonText value) {
        try {
            List<Error> errors = contract(schema).validate(Json.MAPPER.readTree(value.json()));
            return errors.isEmpty() ? Optional.empty() : Optional.of("at \"" + errors.getFirst().getInstanceLocation()
                    + "\": " + errors.getFirst().getMessage());
        } catch (IOException e) {
            throw new IllegalStateException("a stored result is JSON", e);
        }
    }

    /** A capability's contract, compiled (contracts are few and checked once per result: not kept). */
    private Schema contract(JsonText schema) {
        JsonNode document;
        try {
            document = Json.MAPPER.readTree(schema.json());
        } catch (IOException e) {
            throw invalid("", "not JSON");
        }
        if (!document.isObject()) {
            throw invalid("", "a schema is a JSON object");
        }
        return compile(document);
    }

    /** Sets the schema of {@code kind} (the admin only), replacing any earlier one. */
    public synchronized StoredSchema put(Principal caller, String kind, ObjectNode document) {
        requireAdmin(caller, "set payload schemas");
        requireKind(kind);
        Schema compiled = compile(document);
        StoredSchema stored = new StoredSchema(kind,
                new JsonText(new String(Json.bytes(document), StandardCharsets.UTF_8)),
                "s-" + sha256(canonical(document)).substring(0, 12), clock.instant());
        store.putSchema(stored, audit(caller, "schema.put", kind, "schema " + stored.version()));
        byKind.put(kind, new Entry(stored, compiled));
        return stored;
    }

    /** Removes the schema of {@code kind} (the admin only). */
    public synchronized void delete(Principal caller, String kind) {
        requireAdmin(caller, "remove payload schemas");
        requireKind(kind);
        if (!byKind.containsKey(kind)) {
            throw notFound(kind);
        }
        store.deleteSchema(kind, audit(caller, "schema.delete", kind, "schema " + byKind.get(kind).stored().version()
                + " removed"));
        byKind.remove(kind);
    }

    public StoredSchema get(Principal caller, String kind) {
        requireAdmin(caller, "read payload schemas");
        requireKind(kind);
        Entry entry = byKind.get(kind);
        if (entry == null) {
            throw notFound(kind);
        }
        return entry.stored();
    }

    public List<StoredSchema> list(Principal caller) {
        requireAdmin(caller, "list payload schemas");
        return byKind.values().stream().map(Entry::stored)
                .sorted(java.util.Comparator.comparing(StoredSchema::kind)).toList();
    }

    /** Compiles a schema document, refusing with {@code invalid_schema} anything that is not a usable 2020-12 schema. */
    private Schema compile(JsonNode document) {
        JsonNode declared = document.get("$schema");
        if (declared != null && !(declared.isTextual() && (declared.textValue().equals(DIALECT)
                || declared.textValue().equals(DIALECT + "#")))) {
            throw invalid("/$schema", "only JSON Schema 2020-12 is supported ($schema " + DIALECT + ")");
        }
        List<Error> problems = metaSchema.validate(document);
        if (!problems.isEmpty()) {
            Error first = problems.getFirst();
            throw invalid(first.getInstanceLocation().toString(), first.getMessage());
        }
        try {
            Schema schema = registry.getSchema(document);
            schema.initializeValidators(); // resolves every $ref now, not at the first send
            return schema;
        } catch (SchemaException | IllegalArgumentException | IllegalStateException e) {
            throw invalid("", "the schema cannot be used: " + unusable(e));
        }
    }

    /** Why a schema the meta-schema accepted still does not compile, without the library's exception names. */
    private static String unusable(RuntimeException e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof PatternSyntaxException bad) {
                return "the pattern " + bad.getPattern() + " is not a regular expression (" + bad.getDescription() + ")";
            }
            if (cause instanceof IOException outside) { // the loader may not fetch anything
                return "a $ref leads outside the document (" + outside.getMessage() + "); it must point inside it";
            }
        }
        return e.getMessage() + " (a $ref must point inside the document)";
    }

    private ParleyException violation(String kind, Entry entry, String pointer, String detail) {
        metrics.schemaViolations.increment();
        Map<String, String> details = new LinkedHashMap<>();
        details.put("kind", kind);
        details.put("pointer", pointer);
        details.put("detail", detail);
        details.put("schemaVersion", entry.stored().version());
        return new ParleyException(ErrorCode.SCHEMA_VIOLATION, "data of kind " + kind + " breaks its schema at \""
                + pointer + "\": " + detail, details);
    }

    private static ParleyException invalid(String pointer, String detail) {
        return new ParleyException(ErrorCode.INVALID_SCHEMA, "not a usable JSON Schema 2020-12 document: "
                + (pointer.isEmpty() ? "" : pointer + ": ") + detail, Map.of("pointer", pointer, "detail", detail));
    }

    private static ParleyException notFound(String kind) {
        return new ParleyException(ErrorCode.SCHEMA_NOT_FOUND, "no schema is set for kind " + kind);
    }

    private static void requireKind(String kind) {
        SendRequest.requireKind(kind);
        if (HUB_KINDS.contains(kind)) {
            throw new ParleyException(ErrorCode.INVALID_REQUEST, "the hub composes the data of kind " + kind
                    + "; it takes no schema");
        }
    }

    private static void requireAdmin(Principal caller, String what) {
        if (!(caller instanceof Principal.Admin)) {
            throw new ParleyException(ErrorCode.FORBIDDEN, "only the admin may " + what);
        }
    }

    private AuditEntry audit(Principal caller, String action, String kind, String reason) {
        return new AuditEntry(clock.instant(), caller.name(), action, "schema:" + kind, AuditEntry.Decision.ALLOW, reason,
                Optional.empty(), rules.version());
    }

    private static String canonical(JsonNode document) {
        try {
            return CANONICAL.writeValueAsString(CANONICAL.treeToValue(document, Object.class));
        } catch (IOException e) {
            throw new IllegalStateException("a parsed document always serializes", e);
        }
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }
}
