package dev.parley.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * How a bench starts {@code parley serve} in a child process: this JVM's java, the JVM
 * options {@code ./parley serve} runs with, the class path and the entry point of the parley
 * command. parley-cli hands it to {@link BenchCommand}; the bench module cannot name the
 * command it is part of (that would be a dependency cycle).
 */
public record ParleyServe(String mainClass, String classPath, List<String> javaOptions) {
    /** The JVM options of {@code parley serve}, next to its entry point's class; ./parley passes the same file. */
    static final String JAVA_OPTIONS = "serve-jvm.options";
    /** Those of {@code parley serve} on JDK {@value #JDK_25}+ only, after {@value #JAVA_OPTIONS}; ./parley does the same. */
    static final String JAVA_25_OPTIONS = "serve-jvm-25.options";
    private static final int JDK_25 = 25;
    /**
     * protobuf (under CEL) reads memory through sun.misc.Unsafe, which JDK 24 and later warn
     * about at start, to the hub's operator, who can do nothing about it; JDK 21-22 reject the
     * option, so it cannot be in {@value #JAVA_OPTIONS}.
     */
    static final String UNSAFE_ALLOWED = "--sun-misc-unsafe-memory-access=allow";

    public ParleyServe {
        javaOptions = List.copyOf(javaOptions);
    }

    /**
     * The parley command whose entry point is {@code main}, on this JVM's class path (the shaded
     * jar, when run from it), with the JVM options in {@value #JAVA_OPTIONS} beside {@code main}
     * (and {@value #JAVA_25_OPTIONS} on JDK 25+).
     */
    public static ParleyServe of(Class<?> main) {
        List<String> options = new ArrayList<>(javaOptions(main, JAVA_OPTIONS));
        if (Runtime.version().feature() >= JDK_25) {
            options.addAll(javaOptions(main, JAVA_25_OPTIONS));
        }
        return new ParleyServe(main.getName(), System.getProperty("java.class.path"), options);
    }

    /** {@code java --enable-native-access=ALL-UNNAMED [--sun-misc-unsafe-memory-access=allow] <javaOptions> <jvmArgs> -cp <class path> <main> serve <serveArgs>}. */
    List<String> commandLine(List<String> jvmArgs, List<String> serveArgs) {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.add("--enable-native-access=ALL-UNNAMED");
        if (Runtime.version().feature() >= 24) {
            cmd.add(UNSAFE_ALLOWED); // as ./parley adds it, and for the same reason
        }
        cmd.addAll(javaOptions);
        cmd.addAll(jvmArgs); // after the defaults: the JVM takes the last of an option given twice
        cmd.addAll(List.of("-cp", classPath, mainClass, "serve"));
        cmd.addAll(serveArgs);
        return cmd;
    }

    /** The options of a java argument file as ./parley's is written: whitespace-separated, # to the line's end a comment. */
    private static List<String> javaOptions(Class<?> main, String file) {
        try (InputStream in = main.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException(file + " is missing beside " + main.getName());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .map(line -> line.replaceFirst("#.*", "").strip())
                    .flatMap(line -> Arrays.stream(line.split("\\s+")))
                    .filter(option -> !option.isEmpty())
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
