package dev.parley.server;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import dev.parley.core.AuditEntry;

import java.util.Set;
import java.util.stream.Collectors;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaCall.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.equivalentTo;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.simpleNameEndingWith;
import static com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * Which way dependencies point (docs/architecture.md): the edges (REST, A2A, MCP over HTTP and
 * the parley-mcp module) call core services and never a store; the core needs nothing but
 * the JDK; the engine and the transport under the edges never depend on an edge; only the
 * federation module speaks NATS; and the server's packages form no cycle.
 */
@AnalyzeClasses(packages = "dev.parley", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {
    private static final String[] EDGES = {"dev.parley.server.rest..", "dev.parley.server.a2a..",
            "dev.parley.server.mcp..", "dev.parley.server.chat..", "dev.parley.mcp.."};
    private static final String[] UNDER_THE_EDGES = {"dev.parley.server.delivery..", "dev.parley.server.policy..",
            "dev.parley.server.keys..", "dev.parley.server.http..", "dev.parley.server.wire..",
            "dev.parley.server.metrics..", "dev.parley.server.schedule..", "dev.parley.server.permission.."};

    /** A store port is a core interface named {@code *Store}; anything that implements one is a store too. */
    private static final DescribedPredicate<JavaClass> STORES = assignableTo(
            resideInAPackage("dev.parley.core").and(simpleNameEndingWith("Store")))
            .or(resideInAPackage("dev.parley.store.."))
            .as("are a store port or the store");

    /** The packages of the Java platform: those of the runtime's own modules (the tests run on the class path). */
    private static final Set<String> JDK_PACKAGES = ModuleLayer.boot().modules().stream()
            .flatMap(m -> m.getPackages().stream()).collect(Collectors.toUnmodifiableSet());

    /** The Java platform itself: primitives and the JDK's classes, and arrays of either. */
    private static final DescribedPredicate<JavaClass> JDK = DescribedPredicate.describe("the JDK", c -> {
        JavaClass base = c.getBaseComponentType();
        return base.isPrimitive() || JDK_PACKAGES.contains(base.getPackageName());
    });

    /**
     * The one piece of parley-mcp the rest may use: the wording of Jackson's failures in the
     * user's words, shared by every surface that reads JSON (it lives there as the lowest module
     * with Jackson).
     */
    private static final DescribedPredicate<JavaClass> JSON_FAILURES = DescribedPredicate.describe(
            "dev.parley.mcp.JsonFailures", c -> c.getName().equals("dev.parley.mcp.JsonFailures"));

    @ArchTest
    static void edgesNeverTouchAStore(JavaClasses classes) {
        noClasses().that().resideInAnyPackage(EDGES)
                .should().dependOnClassesThat(STORES)
                .because("edges call core services, which own every read and write of the store")
                .check(classes);
    }

    @ArchTest
    static void edgesNeverWriteTheirOwnAuditEntries(JavaClasses classes) {
        noClasses().that().resideInAnyPackage(EDGES)
                .should().callConstructorWhere(target(owner(equivalentTo(AuditEntry.class))))
                .because("the core service that decides an operation also audits it, under the live policy version")
                .check(classes);
    }

    @ArchTest
    static void theCoreNeedsOnlyTheJdk(JavaClasses classes) {
        classes().that().resideInAPackage("dev.parley.core..")
                .should().onlyDependOnClassesThat(resideInAPackage("dev.parley.core..").or(JDK))
                .because("the core is the domain: no I/O library, no framework, no other module")
                .check(classes);
    }

    @ArchTest
    static void theEngineNeverDependsOnAnEdge(JavaClasses classes) {
        noClasses().that().resideInAnyPackage(UNDER_THE_EDGES)
                .should().dependOnClassesThat(resideInAnyPackage(EDGES).and(not(JSON_FAILURES)))
                .because("edges come and go (federation, chat channels); what delivers and decides stays")
                .check(classes);
    }

    /**
     * Only the federation module speaks NATS; the hub sees federation through core ports
     * ({@code Federation}, {@code FederationStore}) and its wiring, and no edge names it.
     */
    @ArchTest
    static void onlyTheFederationModuleSpeaksNats(JavaClasses classes) {
        noClasses().that().resideOutsideOfPackage("dev.parley.nats..")
                .should().dependOnClassesThat().resideInAPackage("io.nats..")
                .check(classes);
        noClasses().that().resideInAnyPackage(EDGES)
                .should().dependOnClassesThat().resideInAPackage("dev.parley.nats..")
                .check(classes);
    }

    @ArchTest
    static void theServersPackagesFormNoCycle(JavaClasses classes) {
        slices().matching("dev.parley.server.(*)..")
                .should().beFreeOfCycles()
                .check(classes);
    }
}
