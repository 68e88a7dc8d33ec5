package dev.parley.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.ScopeType;

/**
 * {@code parley}: the root command. Tests drive it in-process with
 * {@code new CommandLine(new ParleyCommand())}; {@link Main} does the same for the process.
 */
@Command(name = "parley", scope = ScopeType.INHERIT, // subcommands share --version and the exit-code footer
        mixinStandardHelpOptions = true,
        versionProvider = ParleyVersion.class,
        description = "Parley: a permissioned, durable message hub for AI agents.",
        subcommands = {
                ServeCommand.class,
                NodeCommand.class,
                GatewayCommand.class,
                TokenCommand.class,
                GrantCommand.class,
                SendCommand.class,
                ScheduleCommand.class,
                AskCommand.class,
                TailCommand.class,
                AckCommand.class,
                ReplyCommand.class,
                StatusCommand.class,
                TopicCommand.class,
                BroadcastCommand.class,
                TaskCommand.class,
                AgentCommand.class,
                CapabilityCommand.class,
                DeliveryCommand.class,
                DeadLetterCommand.class,
                InviteCommand.class,
                JoinCommand.class,
                PolicyCommand.class,
                SchemaCommand.class,
                AuditCommand.class,
                LimitsCommand.class,
                KeysCommand.class,
                VersionCommand.class,
                CliBenchCommand.class,
                McpCommand.class,
                HelpCommand.class,
        },
        footerHeading = "%nClient commands use PARLEY_URL (default " + HubOptions.DEFAULT_URL
                + ") and PARLEY_TOKEN; --url and --token override them.%n",
        footer = {
                "",
                "Exit codes:",
                "  " + ExitStatus.OK + "    ok",
                "  " + ExitStatus.REFUSED + "    the hub refused the request (other 4xx, e.g. schema_violation);",
                "       serve could not start; a node key file could not be used",
                "  " + ExitStatus.USAGE + "    usage error",
                "  " + ExitStatus.UNREACHABLE + "    cannot reach the hub (network)",
                "  " + ExitStatus.UNAUTHORIZED + "    unauthorized (401): missing or unknown token",
                "  " + ExitStatus.FORBIDDEN + "    forbidden (403): e.g. acl_denied, depth_limit; a denied policy check",
                "  " + ExitStatus.NOT_FOUND + "    not found (404)",
                "  " + ExitStatus.CONFLICT + "    conflict (409): e.g. node_exists, invalid_transition, token_already_used",
                "  " + ExitStatus.HUB_FAILURE + "    the hub failed (5xx) or answered something unreadable",
                "  " + ExitStatus.NO_REPLY + "    no reply in time (ask)",
                "  " + ExitStatus.INTERRUPTED + "  interrupted",
                "Errors are printed on stderr as: parley: <code>: <message>",
        })
public final class ParleyCommand extends CommandGroup {
}
