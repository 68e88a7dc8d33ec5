package dev.parley.bench;

import picocli.CommandLine.Option;

/** {@code --json}: the figures also as one JSON object on the last line of stdout. */
final class OutputOptions {
    @Option(names = "--json", description = "Also print the results as one JSON object on the last line.")
    boolean json;
}
