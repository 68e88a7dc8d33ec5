package dev.parley.cli;

import picocli.CommandLine.Command;

/** {@code parley mcp ...}: Parley as an MCP server. */
@Command(name = "mcp", mixinStandardHelpOptions = true,
        description = "Parley as an MCP server (see docs/claude-code.md).",
        subcommands = McpChannelCommand.class)
final class McpCommand extends CommandGroup {
}
