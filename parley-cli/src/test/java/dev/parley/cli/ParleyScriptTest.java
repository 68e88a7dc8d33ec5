package dev.parley.cli;

import dev.parley.bench.ParleyServe;
import dev.parley.server.Hub;
import dev.parley.server.HubConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import static dev.parley.cli.CliRun.addNode;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code ./parley} script as users run it, a real process: on a JDK with AOT caches it
 * makes one next to the jar in the background, and a command answers the same with the
 * cache, without it, and with a cache the JVM rejects (stale or damaged), never printing the
 * JVM's complaint. The distribution is laid out in a temporary directory: the script, its
 * {@code scripts/jdk.sh}, and a {@code parley-cli/target/parley.jar} whose manifest names the
 * classes under test (each class directory packed as a jar: an AOT cache takes jars only).
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ParleyScriptTest {
    private static final Duration TRAINING = Duration.ofSeconds(120);
    /** serve's JVM options files: the layout's other build files. */
    private static final List<String> SERVE_OPTIONS = List.of(
            "parley-cli/src/main/resources/dev/parley/cli/serve-jvm.options",
            "parley-cli/src/main/resources/dev/parley/cli/serve-jvm-25.options");

    @TempDir
    static Path dir;
    private static Path root;
    private static Path jar;
    private static Path cache;
    private static Hub hub;
    private static String lead;

    @BeforeAll
    static void layOutTheDistribution() throws Exception {
        root = dir.resolve("dist");
        Path repository = Path.of("..").toAbsolutePath().normalize();
        Files.createDirectories(root.resolve("scripts"));
        Files.copy(repository.resolve("parley"), root.resolve("parley"));
        Files.copy(repository.resolve("scripts/jdk.sh"), root.resolve("scripts/jdk.sh"));
        for (String options : SERVE_OPTIONS) { // before the jar: the jar must not look stale
            Files.createDirectories(root.resolve(options).getParent());
            Files.copy(repository.resolve(options), root.resolve(options));
        }
        assertTrue(root.resolve("parley").toFile().setExecutable(true));
        Path target = Files.createDirectories(root.resolve("parley-cli/target"));
        jar = target.resolve("parley.jar");
        cache = target.resolve("parley.aot");
        writeLauncher(jar, classPathJars(Files.createDirectories(dir.resolve("lib"))), "1");
        hub = Hub.start(HubConfig.defaults(dir.resolve("hub")).withPort(0));
        lead = addNode(hub, "lead");
        addNode(hub, "worker", "--parent", "lead");
    }

    @AfterAll
    static void stopHub() {
        if (hub != null) {
            hub.close();
        }
    }

    /** What one run of the script printed and how it ended. */
    private record Run(int exit, String out, String err) {
        /** The output with ids and seqs, which differ from run to run, left out. */
        String shape() {
            return out.replaceAll("id=\\S+", "id=…").replaceAll("seq=\\d+", "seq=…");
        }
    }

    private static Run parley(Map<String, String> env, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(args));
        command.addAll(List.of("--url", hub.url(), "--token", lead));
        return finish(start(env, command));
    }

    /** The script started with {@code args}, on the JDK of this test. */
    private static Process start(Map<String, String> env, List<String> args) throws IOException {
        return start(env, root.resolve("parley").toString(), dir.toFile(), args);
    }

    /** The script started as {@code script} (a path as a shell would be given it) in {@code cwd}. */
    private static Process start(Map<String, String> env, String script, File cwd, List<String> args) throws IOException {
        List<String> command = new ArrayList<>(List.of(script));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).directory(cwd)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().putAll(env);
        return builder.start();
    }

    private static Run finish(Process process) throws Exception {
        // the answers are a few lines: they fit the pipes, so reading after the exit cannot block it
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "./parley did not finish");
        return new Run(process.exitValue(), new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /**
     * Two commands started together on a stale tree (the README's {@code ./parley serve &} and
     * then a client command) build once: the second waits on the script's build lock while the
     * first builds, then finds the jar fresh. Before the lock both built into the same target
     * directories and could leave a broken jar. {@code mvn} is a stand-in on the PATH that counts
     * its runs and holds until the test releases it, so the second command surely starts while
     * the first one's build is under way.
     */
    @Test
    void commandsStartedTogetherOnAStaleTreeBuildOnce() throws Exception {
        Path bin = dir.resolve("stand-in-mvn");
        Path builds = bin.resolve("builds");
        Path release = bin.resolve("release");
        Map<String, String> env = standInMvn(bin);
        Path pom = newerThanTheJar(root.resolve("pom.xml"));
        try {
            Process first = start(env, List.of("--version"));
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.exists(builds));
            Process second = start(env, List.of("--version"));
            // the second blocks in flock (its child) until the first build is over
            await().atMost(Duration.ofSeconds(60)).until(() -> second.descendants()
                    .anyMatch(p -> p.info().command().filter(c -> c.endsWith("/flock")).isPresent()));
            Files.createFile(release);
            Run a = finish(first);
            Run b = finish(second);
            for (Run run : List.of(a, b)) {
                assertEquals(0, run.exit(), run::toString);
                assertTrue(run.out().startsWith("parley "), run::toString);
            }
            assertEquals(List.of("build"), Files.readAllLines(builds), "one build for both commands");
            assertTrue(a.err().contains("parley: building the distribution"), a::toString);
            assertTrue(b.err().contains("waiting for another ./parley to finish building"), b::toString);
            assertFalse(b.err().contains("parley: building the distribution"), b::toString);
        } finally {
            Files.deleteIfExists(pom); // the other tests' layout has no build files newer than the jar
            if (Files.notExists(release)) {
                Files.createFile(release); // a stand-in still holding ends
            }
        }
    }

    /**
     * A build file under {@code node_modules} (the end-to-end checks' npm packages) does not make
     * the jar stale: the script does not walk them, and builds nothing.
     */
    @Test
    void buildFilesUnderNodeModulesDoNotMakeTheJarStale() throws Exception {
        Path bin = dir.resolve("stand-in-mvn-unused");
        Map<String, String> env = standInMvn(bin);
        Files.createFile(bin.resolve("release")); // were it run, the stand-in would not hold
        Path modules = root.resolve("e2e/console/node_modules");
        newerThanTheJar(Files.createDirectories(modules.resolve("some-package")).resolve("pom.xml"));
        try {
            Run run = finish(start(env, List.of("--version")));
            assertEquals(0, run.exit(), run::toString);
            assertFalse(run.err().contains("building"), run::toString);
            assertTrue(Files.notExists(bin.resolve("builds")), "no build was started");
        } finally {
            try (Stream<Path> files = Files.walk(root.resolve("e2e"))) {
                for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(f);
                }
            }
        }
    }

    /**
     * An {@code mvn} stand-in in {@code bin}: it writes a line to {@code bin/builds} for each run,
     * holds until {@code bin/release} exists, then leaves the jar newer than the sources. Returns
     * the environment that puts it first on the PATH (AOT caches off).
     */
    private static Map<String, String> standInMvn(Path bin) throws IOException {
        Files.createDirectories(bin);
        Path mvn = bin.resolve("mvn");
        Files.writeString(mvn, """
                #!/bin/sh
                echo build >> '%s'
                while [ ! -e '%s' ]; do sleep 0.05; done
                touch parley-cli/target/parley.jar
                """.formatted(bin.resolve("builds"), bin.resolve("release")));
        assertTrue(mvn.toFile().setExecutable(true));
        return Map.of("PATH", bin + File.pathSeparator + System.getenv("PATH"), "PARLEY_AOT", "off");
    }

    /**
     * A build file at {@code file}, newer than the jar yet older than the instant a stand-in build
     * would touch the jar: the jar is set two minutes back for that, and the layout's other
     * build files (the serve options) three.
     */
    private static Path newerThanTheJar(Path file) throws IOException {
        Instant now = Instant.now();
        Files.writeString(file, "<project/>");
        for (String options : SERVE_OPTIONS) {
            Files.setLastModifiedTime(root.resolve(options), FileTime.from(now.minusSeconds(180)));
        }
        Files.setLastModifiedTime(jar, FileTime.from(now.minusSeconds(120)));
        Files.setLastModifiedTime(file, FileTime.from(now.minusSeconds(60)));
        return file;
    }

    /** A send that is accepted and one the hub refuses, as a script would run them. */
    private static List<Run> sendTwice(Map<String, String> env) throws Exception {
        return List.of(parley(env, "send", "--to", "worker", "hello"), parley(env, "send", "--to", "nobody", "hello"));
    }

    private static void assertSameAnswers(List<Run> expected, List<Run> actual, String when) {
        for (int i = 0; i < expected.size(); i++) {
            Run e = expected.get(i);
            Run a = actual.get(i);
            assertEquals(e.exit(), a.exit(), when + ": " + a);
            assertEquals(e.shape(), a.shape(), when + ": " + a);
            assertEquals(e.err(), a.err(), when + ": nothing more on stderr (no JVM warning): " + a);
        }
    }

    /**
     * Started by a relative path from another directory, the script finds its distribution
     * beside itself without starting a process for it, and the command still runs in the
     * caller's directory: {@code --batch} reads a file named relative to it.
     */
    @Test
    void aRelativePathFromElsewhereFindsTheDistributionAndKeepsTheCallersDirectory() throws Exception {
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Files.writeString(elsewhere.resolve("messages.jsonl"), """
                {"to":"worker","text":"one"}
                {"to":"worker","text":"two"}
                """);
        String script = "../" + root.getFileName() + "/parley";
        Run run = finish(start(Map.of("PARLEY_AOT", "off"), script, elsewhere.toFile(), List.of(
                "send", "--batch", "messages.jsonl", "--url", hub.url(), "--token", lead)));
        assertEquals(0, run.exit(), run::toString);
        assertEquals(2, run.out().lines().filter(line -> line.startsWith("accepted  id=")).count(), run::toString);
        assertEquals("", run.err(), run::toString);
    }

    @Test
    void commandsAnswerTheSameWithTheCacheWithoutItAndWithOneTheJvmRejects() throws Exception {
        List<Run> plain = sendTwice(Map.of("PARLEY_AOT", "off"));
        assertEquals(0, plain.get(0).exit(), plain.get(0)::toString);
        assertTrue(plain.get(0).out().startsWith("accepted  id="), plain.get(0)::toString);
        assertEquals(ExitStatus.NOT_FOUND, plain.get(1).exit(), plain.get(1)::toString);
        assertTrue(plain.get(1).err().startsWith("parley: node_not_found: "), plain.get(1)::toString);
        assertTrue(Files.notExists(cache), "PARLEY_AOT=off neither uses nor makes a cache");

        // missing: the command runs without it, and the cache is made in the background
        assertSameAnswers(plain, sendTwice(Map.of()), "without a cache");
        Assumptions.assumeTrue(Runtime.version().feature() >= 25, "AOT caches need JDK 25; this JDK has none");
        // the training writes the cache aside and moves it into place whole
        await().atMost(TRAINING).until(() -> Files.isRegularFile(cache) && Files.size(cache) > 0);
        assertTrue(Files.getLastModifiedTime(cache).compareTo(Files.getLastModifiedTime(jar)) > 0);
        assertSameAnswers(plain, sendTwice(Map.of()), "with the cache");

        // stale: the jar changed (another build) while the cache still looks newer; the JVM rejects it, silently
        byte[] trained = Files.readAllBytes(cache);
        writeLauncher(jar, classPathJars(dir.resolve("lib")), "2");
        Files.write(cache, trained);
        Files.setLastModifiedTime(cache, FileTime.from(Instant.now().plusSeconds(60)));
        assertSameAnswers(plain, sendTwice(Map.of()), "with a stale cache");

        // damaged
        Files.writeString(cache, "not an AOT cache");
        Files.setLastModifiedTime(cache, FileTime.from(Instant.now().plusSeconds(60)));
        assertSameAnswers(plain, sendTwice(Map.of()), "with a damaged cache");
    }

    @Test
    void serveRunsTheHubWithTheJvmOptionsOfServeJvmOptions() throws Exception {
        Path data = dir.resolve("served");
        ProcessBuilder builder = new ProcessBuilder(root.resolve("parley").toString(), "serve", "--data", data.toString(),
                "--port", "0").redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectErrorStream(true).redirectOutput(dir.resolve("served.log").toFile());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process serve = builder.start();
        try {
            // the script execs java, so the process is the hub's JVM; jcmd shows the options it took
            List<String> expected = ParleyServe.of(Main.class).javaOptions();
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.exists(data.resolve("admin.token")));
            String jvmArgs = jcmd(serve.pid(), "VM.command_line").lines().filter(l -> l.startsWith("jvm_args:"))
                    .findFirst().orElse("");
            assertTrue(jvmArgs.contains(String.join(" ", expected)), () -> "expected " + expected + " in " + jvmArgs);
            // protobuf's use of sun.misc.Unsafe is allowed without a warning on JDK 24+ (21-23 do not warn);
            // the JVM warns when the hub starts, before it says it listens
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(dir.resolve("served.log"))
                    .contains("parley hub listening"));
            String log = Files.readString(dir.resolve("served.log"));
            assertFalse(log.contains("sun.misc.Unsafe"), () -> "a JVM warning at the hub's start:\n" + log);
        } finally {
            serve.destroy();
            assertTrue(serve.waitFor(30, TimeUnit.SECONDS), "./parley serve did not stop on SIGTERM");
        }
    }

    private static String jcmd(long pid, String command) throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(pid), command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "jcmd did not finish");
        return out;
    }

    /**
     * This JVM's class path as jars: jars as they are, each class directory packed into a jar
     * in {@code lib}; a manifest-only jar's (surefire's) entries taken from its manifest.
     */
    private static List<Path> classPathJars(Path lib) throws IOException {
        Set<Path> entries = new LinkedHashSet<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path path = Path.of(entry).toAbsolutePath();
            Manifest manifest = Files.isRegularFile(path) ? manifestOf(path) : null;
            String listed = manifest == null ? null : manifest.getMainAttributes().getValue(Attributes.Name.CLASS_PATH);
            if (listed != null && path.getFileName().toString().startsWith("surefire")) {
                for (String url : listed.trim().split("\\s+")) {
                    entries.add(Path.of(URI.create(url)));
                }
            } else {
                entries.add(path);
            }
        }
        List<Path> jars = new ArrayList<>();
        int n = 0;
        for (Path entry : entries) {
            if (Files.isDirectory(entry)) {
                Path packed = lib.resolve("dir-" + n++ + ".jar");
                if (Files.notExists(packed)) {
                    pack(entry, packed);
                }
                jars.add(packed);
            } else if (Files.isRegularFile(entry)) {
                jars.add(entry);
            }
        }
        return jars;
    }

    private static Manifest manifestOf(Path jarFile) throws IOException {
        try (JarFile file = new JarFile(jarFile.toFile())) {
            return file.getManifest();
        } catch (IOException notAJar) {
            return null;
        }
    }

    private static void pack(Path directory, Path into) throws IOException {
        try (OutputStream file = Files.newOutputStream(into); JarOutputStream out = new JarOutputStream(file);
             Stream<Path> files = Files.walk(directory)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                out.putNextEntry(new JarEntry(directory.relativize(f).toString().replace(File.separatorChar, '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
        }
    }

    /** The launcher jar: {@code Main} on the given jars; {@code build} tells one build of it from another. */
    private static void writeLauncher(Path at, List<Path> classPath, String build) throws IOException {
        Manifest manifest = new Manifest();
        Attributes main = manifest.getMainAttributes();
        main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        main.put(Attributes.Name.MAIN_CLASS, Main.class.getName());
        main.put(Attributes.Name.CLASS_PATH, String.join(" ", classPath.stream().map(p -> p.toUri().toString()).toList()));
        main.putValue("Parley-Test-Build", build);
        Path aside = at.resolveSibling(at.getFileName() + ".tmp");
        try (OutputStream out = new JarOutputStream(Files.newOutputStream(aside), manifest)) {
            out.flush();
        }
        Files.move(aside, at, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
}
