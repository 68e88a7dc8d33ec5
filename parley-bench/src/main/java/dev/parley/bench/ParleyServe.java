package dev.parley.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How a bench starts {@code parley serve} in a child process: this JVM's java, the class path
 * and the entry point of the parley command. parley-cli hands it to {@link BenchCommand}; the
 * bench module cannot name the command it is part of (that would be a dependency cycle).
 */
public record ParleyServe(String mainClass, String classPath) {

    /** The parley command whose entry point is {@code main}, on this JVM's class path (the shaded jar, when run from it). */
    public static ParleyServe of(Class<?> main) {
        return new ParleyServe(main.getName(), System.getProperty("java.class.path"));
    }

    /** {@code java --enable-native-access=ALL-UNNAMED <jvmArgs> -cp <class path> <main> serve <serveArgs>}. */
    List<String> commandLine(List<String> jvmArgs, List<String> serveArgs) {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", classPath, mainClass, "serve"));
        cmd.addAll(serveArgs);
        return cmd;
    }
}
