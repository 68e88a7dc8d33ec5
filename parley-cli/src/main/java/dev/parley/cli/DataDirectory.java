package dev.parley.cli;

import picocli.CommandLine.Option;

import java.nio.file.Path;

/** {@code --data DIR}: a hub's data directory, the same for {@code serve} and the commands that work on its files. */
final class DataDirectory {
    @Option(names = "--data", paramLabel = "DIR", defaultValue = "${env:PARLEY_DATA:-parley-data}",
            description = "The hub's data directory (default: env PARLEY_DATA, else ./parley-data).")
    Path dir;

    Path path() {
        return dir;
    }
}
