package dev.parley.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

/**
 * {@code parley audit}: the hub's audit log, in three modes over the same filters: a search
 * (one page, newest first), {@code --follow} (new entries as they are written, oldest first)
 * and {@code --export} (every match as JSON Lines, streamed from the hub).
 */
@Command(name = "audit", mixinStandardHelpOptions = true,
        description = {"Search the audit log (admin): access decisions, admissions, key changes.",
                "Default: one page of matches, newest first.",
                "--follow: new entries as they are written, oldest first (from --since",
                "  if given, else from now), polling every second.",
                "--export: every match as JSON Lines on stdout."})
final class AuditCommand extends ClientCommand {
    private static final Duration POLL = Duration.ofSeconds(1);
    /** Entries a follower asks for at once: the hub's largest page. */
    private static final int FOLLOW_PAGE = 1000;

    @Option(names = "--node", paramLabel = "N", description = "Entries whose actor or target is this node.")
    String node;

    @Option(names = "--decision", paramLabel = "allow|deny", completionCandidates = Decisions.class,
            description = "Only allowed or only denied.")
    String decision;

    @Option(names = "--rule", paramLabel = "R", description = "Decided by this policy rule.")
    String rule;

    @Option(names = "--action", paramLabel = "A", description = "Of this action, e.g. send, auth.exchange, invite.create.")
    String action;

    @Option(names = "--since", paramLabel = "T", converter = TimeConverter.class,
            description = "At or after T: RFC 3339 (2026-11-22T10:00:00Z) or a time ago (90s, 10m, 2h, 7d).")
    Instant since;

    @Option(names = "--until", paramLabel = "T", converter = TimeConverter.class,
            description = "Before T: RFC 3339 or a time ago.")
    Instant until;

    @Option(names = "--limit", paramLabel = "N",
            description = "At most N entries (search: 1 to 1000, hub default 100; export: default all).")
    Integer limit;

    @Option(names = "--before", paramLabel = "ID", description = "Search only: the page older than this entry id.")
    Long before;

    @Option(names = {"-f", "--follow"}, description = "Keep printing new entries until interrupted (or --count).")
    boolean follow;

    @Option(names = "--count", paramLabel = "N", description = "With --follow: exit after N entries.")
    Long count;

    @Option(names = "--export", description = "Print every match as JSON Lines (one entry a line, newest first).")
    boolean export;

    @Override
    protected void execute(HubClient client) throws InterruptedException {
        check();
        if (export) {
            client.lines(query("format", "jsonl", "limit", limit), out()::println);
            out().flush();
        } else if (follow) {
            follow(client);
        } else {
            search(client);
        }
    }

    private void check() {
        if (decision != null && !decision.equals("allow") && !decision.equals("deny")) {
            throw usage("--decision must be allow or deny");
        }
        if (follow && export) {
            throw usage("--follow and --export do not go together");
        }
        if (count != null && (!follow || count < 1)) {
            throw usage("--count goes with --follow and must be 1 or more");
        }
        if (follow && (limit != null || before != null)) {
            throw usage("--follow prints every new entry: --limit and --before do not apply (use --count)");
        }
        if (export && before != null) {
            throw usage("--export reads every match: --before does not apply");
        }
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** {@code /v1/audit} with the filters, plus {@code extra} name/value pairs. */
    private String query(Object... extra) {
        List<Object> pairs = new ArrayList<>(Arrays.asList("node", node, "decision", decision, "rule", rule,
                "action", action, "since", since, "until", until));
        pairs.addAll(Arrays.asList(extra));
        return HubClient.query("/v1/audit", pairs.toArray());
    }

    private void search(HubClient client) throws InterruptedException {
        JsonNode answer = client.get(query("limit", limit, "before", before));
        emit(answer, () -> {
            Table table = new Table("ID", "AT", "DECISION", "ACTOR", "ACTION", "TARGET", "RULE", "REASON");
            answer.path("items").forEach(e -> table.row(field(e, "id"), field(e, "at"), field(e, "decision"),
                    field(e, "actor"), field(e, "action"), field(e, "target"), field(e, "rule"), reason(e)));
            table.print(out());
            if (answer.path("next").isNumber()) {
                out().println("(more: add --before " + answer.path("next").asLong() + ")");
            }
        });
    }

    /**
     * Polls for entries newer than the last one printed. Without --since it starts after the
     * newest entry that exists now. Once the hub has answered, an outage is waited out.
     */
    private void follow(HubClient client) throws InterruptedException {
        long cursor = since != null ? 0 : newest(client);
        long printed = 0;
        boolean answered = since == null;
        while (true) {
            try {
                for (JsonNode entry : newerThan(client, cursor)) {
                    emit(entry, () -> out().println(line(entry)));
                    cursor = entry.path("id").asLong();
                    if (count != null && ++printed >= count) {
                        return;
                    }
                }
                answered = true;
            } catch (HubException e) {
                if (!answered || !e.retryable()) {
                    throw e;
                }
                err().println("parley: audit poll failed (" + e.getMessage() + "); retrying");
                err().flush();
            }
            Thread.sleep(POLL);
        }
    }

    /** The id of the newest matching entry, 0 when there is none. */
    private long newest(HubClient client) throws InterruptedException {
        JsonNode items = client.get(query("limit", 1)).path("items");
        return items.isEmpty() ? 0 : items.get(0).path("id").asLong();
    }

    /** The matching entries with an id above {@code cursor}, oldest first; pages back as far as needed. */
    private List<JsonNode> newerThan(HubClient client, long cursor) throws InterruptedException {
        List<JsonNode> newestFirst = new ArrayList<>();
        Long page = null;
        while (true) {
            JsonNode answer = client.get(query("limit", FOLLOW_PAGE, "before", page));
            for (JsonNode entry : answer.path("items")) {
                if (entry.path("id").asLong() <= cursor) {
                    return newestFirst.reversed();
                }
                newestFirst.add(entry);
            }
            if (!answer.path("next").isNumber()) {
                return newestFirst.reversed();
            }
            page = answer.path("next").asLong();
        }
    }

    /** One entry on one line: {@code [id] at  decision  actor action target  rule=R  reason}. */
    static String line(JsonNode entry) {
        return "[" + field(entry, "id") + "] " + field(entry, "at") + "  " + field(entry, "decision") + "  "
                + field(entry, "actor") + " " + field(entry, "action") + " " + field(entry, "target")
                + "  rule=" + field(entry, "rule") + "  " + reason(entry);
    }

    private static String reason(JsonNode entry) {
        return field(entry, "reason").replace("\r", "\\r").replace("\n", "\\n");
    }

    static final class Decisions implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return List.of("allow", "deny").iterator();
        }
    }

    /** RFC 3339, or a duration meaning that long before now. */
    static final class TimeConverter implements ITypeConverter<Instant> {
        @Override
        public Instant convert(String value) {
            try {
                return OffsetDateTime.parse(value.strip()).toInstant();
            } catch (DateTimeParseException notATime) {
                try {
                    return Instant.now().minus(new DurationConverter().convert(value));
                } catch (TypeConversionException notADuration) {
                    throw new TypeConversionException("'" + value
                            + "' is neither an RFC 3339 time (2026-11-22T10:00:00Z) nor a time ago (10m, 2h, 7d)");
                }
            }
        }
    }
}
