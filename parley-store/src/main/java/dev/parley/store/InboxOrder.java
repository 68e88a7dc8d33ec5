package dev.parley.store;

/**
 * The statements that read an inbox's envelopes in seq order.
 *
 * <p>An inbox's order is {@code inbox_order (to_node, seq, pos)}, which the writer's fold
 * ({@link Ledger#fold}) fills in bulk for every envelope up to its mark ({@code envelopes_folded});
 * the envelopes past the mark, at most one fold interval of them, are found by position. An index
 * keyed by inbox first, written at every send, put each send's entry on a page of its own inbox:
 * about a fifth of the writer's CPU a send (V20; BENCHMARKS.md, "Issue 15, stop 44"). The one writer draws an inbox's
 * seqs and the envelopes' positions together, so within an inbox seq order is position order, and
 * every folded envelope of an inbox comes before every one past the mark.
 *
 * <p>A read in one statement reads one snapshot, in which the mark and the order agree. A page
 * of an inbox, the replays' read, takes three instead ({@link #MARK}, {@link #FOLDED_AFTER}, then
 * {@link #PAST_AFTER} only when the folded ones do not fill it): reading the envelopes past a mark
 * read first, and after the last seq the order gave, it neither misses an envelope folded in
 * between (the order holds every envelope up to the mark by then) nor gives one twice. Public for
 * the benchmarks, which fill and read a store's file as the hub does.
 */
public final class InboxOrder {
    /** The position of the last envelope folded. */
    static final String MARK = "SELECT pos FROM envelopes_folded";
    private static final String MARK_NOW = "(" + MARK + ")";

    /** The fold's part: the order of every envelope past the mark, inserted inbox by inbox. */
    public static final String FOLD = "INSERT INTO inbox_order (to_node, seq, pos) SELECT to_node, seq, pos FROM envelopes"
            + " WHERE pos > " + MARK_NOW + " ORDER BY to_node, seq";

    /** The end of a fold: the mark moves past every envelope written. */
    public static final String MOVE_MARK = "UPDATE envelopes_folded SET pos = (SELECT coalesce(max(pos), 0) FROM envelopes)";

    /** The newest seq of inbox {@code ?1}, 0 for an empty inbox. */
    public static final String HEAD = "SELECT max((SELECT coalesce(max(seq), 0) FROM inbox_order WHERE to_node = ?1),"
            + " (SELECT coalesce(max(seq), 0) FROM envelopes WHERE pos > " + MARK_NOW + " AND to_node = ?1))";

    /** The ids of the envelopes of the inbox bound to the next two {@code ?}. */
    static final String IDS = "SELECT id FROM envelopes WHERE pos IN (" + positions("?", "") + ")";

    /** A page's first part: the folded envelopes of inbox {@code ?1} after seq {@code ?2}, at most {@code ?3}. */
    static final String FOLDED_AFTER = foldedAfter(Rows.ENVELOPE_COLUMNS_OF_E);

    /** A page's second part: the envelopes past position {@code ?1} of inbox {@code ?2} after seq {@code ?3}, at most {@code ?4}. */
    static final String PAST_AFTER = "SELECT " + Rows.ENVELOPE_COLUMNS + " FROM envelopes"
            + " WHERE pos > ?1 AND to_node = ?2 AND seq > ?3 ORDER BY pos LIMIT ?4";

    private InboxOrder() {
    }

    /** {@link #FOLDED_AFTER} selecting {@code columns} of {@code e}, each qualified ({@code e.id, e.seq, …}). */
    public static String foldedAfter(String columns) {
        return "SELECT " + columns + " FROM inbox_order i CROSS JOIN envelopes e ON e.pos = i.pos"
                + " WHERE i.to_node = ?1 AND i.seq > ?2 ORDER BY i.seq LIMIT ?3";
    }

    /**
     * An operand of {@code pos IN (…)}: the positions of the envelopes of the inbox bound to
     * {@code node} (a parameter, {@code ?1} or {@code ?}, read twice) whose seq meets {@code seqs}
     * (a condition on {@code seq}, or none when empty). Read with {@code ORDER BY pos}, they come in
     * seq order.
     */
    static String positions(String node, String seqs) {
        String and = seqs.isEmpty() ? "" : " AND " + seqs;
        return "SELECT pos FROM inbox_order WHERE to_node = " + node + and + " UNION ALL SELECT pos FROM envelopes"
                + " WHERE pos > " + MARK_NOW + " AND to_node = " + node + and;
    }

    /**
     * The newest envelopes first of the inbox bound to {@code ?1} whose row meets {@code where} (a
     * condition on {@code e}'s columns), at most {@code limit}: {@code columns} selected from
     * {@code e}, each qualified ({@code e.id, e.seq, …}), {@code e.seq} among them.
     */
    static String newestFirst(String columns, String where, String limit) {
        return "SELECT * FROM (SELECT " + columns + " FROM envelopes e WHERE e.pos > " + MARK_NOW + " AND e.to_node = ?1 AND "
                + where + " ORDER BY e.pos DESC LIMIT " + limit + ") UNION ALL SELECT * FROM (SELECT " + columns
                + " FROM inbox_order i CROSS JOIN envelopes e ON e.pos = i.pos WHERE i.to_node = ?1 AND " + where
                + " ORDER BY i.seq DESC LIMIT " + limit + ") ORDER BY seq DESC LIMIT " + limit;
    }
}
