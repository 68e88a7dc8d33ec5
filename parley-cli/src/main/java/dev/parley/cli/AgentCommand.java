package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.core.AgentSpec;
import dev.parley.core.IoReason;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** {@code parley agent ...}: managed agents, which the hub runs when their mail arrives ({@code docs/agents.md}). */
@Command(name = "agent", mixinStandardHelpOptions = true,
        description = "Managed agents: the hub runs them, woken by their mail; and the runner that works an inbox.",
        subcommands = {AgentCommand.Start.class, AgentCommand.ListAgents.class, AgentCommand.Stop.class,
                AgentCommand.Restart.class, AgentCommand.Logs.class, AgentCommand.Spec.class, AgentCommand.Run.class, AgentCommand.Claude.class,
                AgentCommand.Echo.class})
final class AgentCommand extends CommandGroup {

    @Command(name = "start", mixinStandardHelpOptions = true,
            description = "Start an agent from its spec (YAML); the caller's node becomes its parent.")
    static final class Start extends ClientCommand {
        @Option(names = "--spec", required = true, paramLabel = "FILE", description = "The agent spec (YAML).")
        Path spec;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            String text;
            try {
                text = Files.readString(spec, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw HubException.local("invalid_spec", "cannot read the spec " + spec + ": " + IoReason.of(e), e);
            }
            JsonNode agent = client.post("/v1/agents", JsonTrees.object().put("spec", text));
            emit(agent, () -> line("started", "agent", field(agent, "id"), "parent", field(agent, "parent"),
                    "wake", field(agent, "wake"), "state", field(agent, "state")));
        }
    }

    /** A runner of the agent protocol: how often it heartbeats, how long one turn may take. */
    abstract static class Runner extends ClientCommand {
        @Option(names = "--heartbeat", paramLabel = "DURATION", defaultValue = "20s",
                converter = DurationConverter.class, description = "How often to heartbeat while a turn runs (default 20s).")
        java.time.Duration heartbeat;

        @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10m", converter = DurationConverter.class,
                description = "How long one turn may take, declared in the claim (default 10m; at most 24h).")
        java.time.Duration timeout;

        @Option(names = "--max-messages", paramLabel = "N", defaultValue = "10",
                description = "For a chat message: how many messages of its conversation a turn reads (default 10; 1 to 100).")
        int maxMessages;

        abstract Turn turn();

        /**
         * The kinds the agent's spec gives tools ({@code PARLEY_TOOL_KINDS}, set by the hub);
         * none when unset. A value the hub would never write is a usage error, not a silent none.
         */
        java.util.Map<String, dev.parley.core.ToolKind> toolKinds() {
            try {
                return AgentSpec.ToolKindOverrides.read(java.util.Optional.ofNullable(
                        System.getenv(AgentSpec.ToolKindOverrides.VARIABLE))).kinds();
            } catch (dev.parley.core.ParleyException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                        AgentSpec.ToolKindOverrides.VARIABLE + ": " + e.getMessage());
            }
        }

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            if (timeout.compareTo(java.time.Duration.ofHours(24)) > 0) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--timeout is at most 24h");
            }
            if (heartbeat.toMillis() < 100) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--heartbeat is at least 100ms");
            }
            if (maxMessages < 1 || maxMessages > 100) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--max-messages is 1 to 100");
            }
            new AgentRunner(client, new AgentRunner.Settings(turn(), heartbeat, timeout, maxMessages), err()).run();
        }
    }

    @Command(name = "run", mixinStandardHelpOptions = true,
            description = {"Work this node's inbox with COMMAND (the agent protocol's reference runner): for each"
                    + " envelope not settled, claim it, run COMMAND with its text on stdin while heartbeating, and"
                    + " reply with its stdout (no output: processed; a failing status or a timeout: failed).",
                    "Runs until stopped. As a managed agent: runner: process, command: [parley, agent, run, --, ...];"
                    + " the hub gives it PARLEY_URL and PARLEY_TOKEN (COMMAND does not get the token)."})
    static final class Run extends Runner {
        @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "The program and its arguments.")
        java.util.List<String> command;

        @Override
        Turn turn() {
            return new CommandTurn(command, toolKinds());
        }
    }

    @Command(name = "echo", mixinStandardHelpOptions = true,
            description = {"Work this node's inbox by echoing: for each envelope not settled, claim it and reply with"
                    + " its text (its data as JSON when it has none). The simplest agent, to try a hub's wiring and"
                    + " traces. Runs until stopped."})
    static final class Echo extends Runner {
        @Override
        Turn turn() {
            return new EchoTurn();
        }
    }

    @Command(name = "claude", mixinStandardHelpOptions = true,
            description = {"Work this node's inbox with Claude Code: for each envelope not settled, claim it, run"
                    + " claude -p --input-format stream-json --output-format stream-json with it as the user message,"
                    + " heartbeat each tool it starts, and reply with its result (an error result: failed).",
                    "AskUserQuestion, EnterPlanMode, ExitPlanMode, EnterWorktree and ExitWorktree are disallowed"
                    + " unless --allow-tool names them; so are the tools of PARLEY_TOOL_BLOCKLIST (the agent spec's"
                    + " toolBlocklist, given by the hub), whatever --allow-tool says. Runs until stopped."})
    static final class Claude extends Runner {
        @Option(names = "--claude-bin", paramLabel = "PATH", defaultValue = "claude",
                description = "The Claude Code CLI (default: claude on PATH).")
        String bin;

        @Option(names = "--allow-tool", paramLabel = "TOOL", description = "Allow a tool disallowed by default.")
        java.util.List<String> allowed = new java.util.ArrayList<>();

        @Option(names = "--disallow-tool", paramLabel = "TOOL", description = "Disallow one more tool.")
        java.util.List<String> disallowed = new java.util.ArrayList<>();

        @Parameters(arity = "0..*", paramLabel = "CLAUDE_ARG", description = "More arguments for claude (after --).")
        java.util.List<String> extra = new java.util.ArrayList<>();

        @Override
        Turn turn() {
            return turn(AgentSpec.ToolBlocklist.read(java.util.Optional.ofNullable(
                    System.getenv(AgentSpec.ToolBlocklist.VARIABLE))));
        }

        /** The turn, disallowing also {@code blocklist}: the spec's, which no --allow-tool undoes. */
        ClaudeCodeTurn turn(java.util.List<String> blocklist) {
            java.util.List<String> blocked = new java.util.ArrayList<>(ClaudeCodeTurn.DISALLOWED);
            blocked.removeAll(allowed);
            java.util.stream.Stream.concat(disallowed.stream(), blocklist.stream()).filter(t -> !blocked.contains(t))
                    .forEach(blocked::add);
            return new ClaudeCodeTurn(bin, blocked, extra, toolKinds());
        }
    }

    @Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
            description = "List agents and their states (admin: all; a node: its own children).")
    static final class ListAgents extends ClientCommand {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode answer = client.get("/v1/agents");
            emit(answer, () -> {
                Table table = new Table("ID", "PARENT", "WAKE", "STATE", "SETTLED", "FAILURE");
                answer.path("items").forEach(a -> table.row(field(a, "id"), field(a, "parent"), field(a, "wake"),
                        field(a, "state"), field(a, "settled"), field(a, "failure")));
                table.print(out());
            });
        }
    }

    /** A command about one agent. */
    abstract static class OneAgent extends ClientCommand {
        @Parameters(paramLabel = "ID", description = "The agent's id.")
        String id;

        String path(String tail) {
            return "/v1/agents/" + HubClient.segment(id) + tail;
        }
    }

    /** A stop or a restart: one POST, the agent as it then stands. */
    abstract static class Move extends OneAgent {
        private final String action;
        private final String done;

        Move(String action, String done) {
            this.action = action;
            this.done = done;
        }

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            JsonNode agent = client.post(path("/" + action), JsonTrees.object());
            emit(agent, () -> line(done, "agent", field(agent, "id"), "state", field(agent, "state")));
        }
    }

    @Command(name = "stop", mixinStandardHelpOptions = true,
            description = "Stop an agent and the command it runs; it stays stopped, across hub restarts, until restarted.")
    static final class Stop extends Move {
        Stop() {
            super("stop", "stopped");
        }
    }

    @Command(name = "restart", mixinStandardHelpOptions = true,
            description = "Restart an agent: clears a stop or a failure; it runs as its wake says.")
    static final class Restart extends Move {
        Restart() {
            super("restart", "restarted");
        }
    }

    @Command(name = "logs", mixinStandardHelpOptions = true,
            description = "Print the end of an agent's log: its commands' stderr and the runner's notes.")
    static final class Logs extends OneAgent {
        @Option(names = "--lines", paramLabel = "N", defaultValue = "200", description = "Lines from the end (default 200).")
        int lines;

        @Override
        protected void execute(HubClient client) throws InterruptedException {
            client.lines(HubClient.query(path("/logs"), "lines", lines), out()::println);
        }
    }

    @Command(name = "spec", mixinStandardHelpOptions = true, description = "Print an agent's spec as it was written.")
    static final class Spec extends OneAgent {
        @Override
        protected void execute(HubClient client) throws InterruptedException {
            client.lines(path("/spec"), out()::println);
        }
    }
}
