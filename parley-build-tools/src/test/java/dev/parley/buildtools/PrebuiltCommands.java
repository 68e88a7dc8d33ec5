package dev.parley.buildtools;

import picocli.CommandLine;

/** What the class CommandModelSource writes implements: the CLI declares its own, this one is the fixtures'. */
interface PrebuiltCommands {
    CommandLine root();

    CommandLine subcommand(String name);
}
