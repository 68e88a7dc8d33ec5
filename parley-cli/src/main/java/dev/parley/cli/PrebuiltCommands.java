package dev.parley.cli;

import picocli.CommandLine;

import java.util.Optional;

/**
 * The commands as picocli's programmatic model, written at build time from the annotated
 * classes (parley-build-tools' {@code CommandModelSource}, run by this module's build) and built
 * without reading an annotation: reading them made a cold JVM spin a proxy class for each
 * annotation type, most of the 70 ms picocli took to build {@code parley send} (BENCHMARKS.md,
 * "Issue 15, stop 67"). The annotated classes stay the definition; {@code PrebuiltCommandsTest}
 * holds the two models equal. The written model sets the commands' fields directly, so fields
 * that options, mixins and {@code @Spec} set are package-private, not private: a private one
 * leaves its command to be read from its annotations at run time, and the written class says why.
 *
 * <p>The written model differs only where nothing here reads it: a command lists no mixins (its
 * {@code -h} and {@code -V} are plain options, not picocli's standard-help mixin), and the root's
 * scope is local, its subcommands written with what they inherit from it already applied; so an
 * annotated subcommand added to a written root would inherit nothing ({@link ParleyCommand#forArgs}
 * never does that).
 */
interface PrebuiltCommands {
    /**
     * The class the build writes, in its {@code process-classes} phase; absent after
     * {@code mvn compile} alone, which first removes a previous build's, so that a written model
     * never outlives the classes it was written from.
     */
    String WRITTEN = "dev.parley.cli.WrittenCommands";

    /** The root command alone, without subcommands. */
    CommandLine root();

    /** The root's subcommand {@code name} with its own subcommands, or null when it is built from its annotations. */
    CommandLine subcommand(String name);

    /** The written commands, or empty when this build has none. */
    static Optional<PrebuiltCommands> load() {
        try {
            return Optional.of((PrebuiltCommands) Class.forName(WRITTEN).getDeclaredConstructor().newInstance());
        } catch (ClassNotFoundException | LinkageError e) { // none, or one this build cannot load
            return Optional.empty();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("the written commands cannot be made", e);
        }
    }
}
