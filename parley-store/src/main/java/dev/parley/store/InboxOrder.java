package dev.parley.store;

/**
 * The statements that read an inbox's envelopes in seq order.
 *
 * <p>An inbox's order is {@code inbox_order (to_node, seq, pos)} in the store's side indexes
 * ({@link SideIndexes}), filled in bulk by their thread for every envelope up to its mark ({@code
 * order_mark}); the envelopes past the mark, about one interval of them, are found by position.
 * An index keyed by inbox first, written at every send, put each send's entry on a page of its
 * own inbox: about a fifth of the writer's CPU a send (V20; BENCHMARKS.md, "Issue 15, stop 44");
 * filled by the writer's fold, it held every send for 2.5-3 ms ten times a second (stop 45). The
 * one writer draws an inbox's seqs and the envelopes' positions together, so within an inbox seq
 * order is position order, and every envelope of an inbox in the order comes before every one
 * past the mark.
 *
 * <p>A read in one statement reads one snapshot, in which the mark and the order agree. A page
 * of an inbox, the replays' read, takes three instead ({@link #MARK}, {@link #FOLDED_AFTER}, then
 * {@link #PAST_AFTER} only when the folded ones do not fill it): reading the envelopes past a mark
 * read first, and after the last seq the order gave, it neither misses an envelope folded in
 * between (the order holds every envelope up to the mark by then) nor gives one twice. The order
 * and the envelopes are two files, each read at its own snapshot; a statement that reads both is
 * right whichever is newer, because envelopes are never removed and the mark only moves forward:
 * an order newer than the envelopes names positions the envelopes' snapshot does not hold yet,
 * which the join drops, the newest of their inboxes; an older order leaves more to read by
 * position. Public for the benchmarks, which read a store's file as the hub does.
 */
public final class InboxOrder {
    private static final String ORDER = SideIndexes.SCHEMA + ".inbox_order";
    /** The position of the last envelope in the order. */
    static final String MARK = "SELECT order_mark FROM " + SideIndexes.SCHEMA + ".indexed";
    private static final String MARK_NOW = "(" + MARK + ")";

    /** The newest seq of inbox {@code ?1}, 0 for an empty inbox. */
    public static final String HEAD = "SELECT max((SELECT coalesce(max(seq), 0) FROM " + ORDER + " WHERE to_node = ?1),"
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
        return "SELECT " + columns + " FROM " + ORDER + " i CROSS JOIN envelopes e ON e.pos = i.pos"
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
        return "SELECT pos FROM " + ORDER + " WHERE to_node = " + node + and + " UNION ALL SELECT pos FROM envelopes"
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
                + " FROM " + ORDER + " i CROSS JOIN envelopes e ON e.pos = i.pos WHERE i.to_node = ?1 AND " + where
                + " ORDER BY i.seq DESC LIMIT " + limit + ") ORDER BY seq DESC LIMIT " + limit;
    }
}
