package dev.parley.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.ScopeType;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * {@code parley}: the root command. {@link Main} and the tests run {@link #forArgs}, which builds
 * only the subcommand the arguments name.
 */
@Command(name = "parley", scope = ScopeType.INHERIT, // subcommands share --version and the exit-code footer
        mixinStandardHelpOptions = true,
        versionProvider = ParleyVersion.class,
        description = "Parley: a permissioned, durable message hub for AI agents.",
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
    /** Every subcommand by name, in the order the help lists them; each is made only when registered. */
    private static final Map<String, Class<?>> SUBCOMMANDS = subcommands();

    private static Map<String, Class<?>> subcommands() {
        Map<String, Class<?>> all = new LinkedHashMap<>();
        all.put("serve", ServeCommand.class);
        all.put("node", NodeCommand.class);
        all.put("gateway", GatewayCommand.class);
        all.put("token", TokenCommand.class);
        all.put("grant", GrantCommand.class);
        all.put("send", SendCommand.class);
        all.put("schedule", ScheduleCommand.class);
        all.put("ask", AskCommand.class);
        all.put("tail", TailCommand.class);
        all.put("ack", AckCommand.class);
        all.put("reply", ReplyCommand.class);
        all.put("status", StatusCommand.class);
        all.put("topic", TopicCommand.class);
        all.put("broadcast", BroadcastCommand.class);
        all.put("task", TaskCommand.class);
        all.put("agent", AgentCommand.class);
        all.put("capability", CapabilityCommand.class);
        all.put("delivery", DeliveryCommand.class);
        all.put("dlq", DeadLetterCommand.class);
        all.put("invite", InviteCommand.class);
        all.put("join", JoinCommand.class);
        all.put("policy", PolicyCommand.class);
        all.put("schema", SchemaCommand.class);
        all.put("audit", AuditCommand.class);
        all.put("limits", LimitsCommand.class);
        all.put("keys", KeysCommand.class);
        all.put("version", VersionCommand.class);
        all.put("bench", CliBenchCommand.class);
        all.put("mcp", McpCommand.class);
        all.put("help", HelpCommand.class);
        return all;
    }

    /** The commands as written at build time, when this build wrote them. */
    private static final Optional<PrebuiltCommands> PREBUILT = PrebuiltCommands.load();

    /**
     * The whole command, every subcommand built from its annotations: what the help lists, and
     * what the build transcribes into {@link PrebuiltCommands}.
     */
    public static CommandLine all() {
        return annotated(name -> true);
    }

    /**
     * The command for {@code args}. Building a subcommand from its annotations costs picocli's
     * reflection over it and all its nested commands, and a cold JVM a proxy class for each
     * annotation type, so when the first argument names a subcommand only that one is built, from
     * the model the build wrote where there is one: {@code parley send} pays for {@code send}
     * alone, and reads no annotation. {@code parley --version} (or {@code -V}) alone needs no
     * subcommand. Anything else ({@code help}, another option, a typo, nothing) gets them all, to
     * list them.
     */
    public static CommandLine forArgs(String... args) {
        PrebuiltCommands prebuilt = PREBUILT.orElse(null);
        if (args.length > 0 && SUBCOMMANDS.containsKey(args[0]) && !args[0].equals("help")) {
            CommandLine written = prebuilt == null ? null : prebuilt.subcommand(args[0]);
            if (written == null) {
                return annotated(args[0]::equals);
            }
            CommandLine root = prebuilt.root();
            root.addSubcommand(args[0], written);
            return root;
        }
        if (args.length == 1 && (args[0].equals("--version") || args[0].equals("-V"))) {
            return prebuilt == null ? annotated(name -> false) : prebuilt.root();
        }
        return all();
    }

    private static CommandLine annotated(Predicate<String> wanted) {
        CommandLine root = new CommandLine(new ParleyCommand());
        SUBCOMMANDS.forEach((name, type) -> {
            if (wanted.test(name)) {
                root.addSubcommand(name, type);
            }
        });
        return root;
    }
}
