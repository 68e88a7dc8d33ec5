-- The inboxes' order moves out of the store into its side indexes (side-indexes.db, beside it),
-- kept by a thread of their own instead of the writer's fold, which held every send for 2.5-3 ms
-- ten times a second to write it (BENCHMARKS.md, "Issue 15, stops 45 and 51"; store.SideIndexes).
-- The order is derived from the envelopes' rows; the side indexes build it again when the store
-- opens. envelopes_folded stays: it marks how far the allowed sends' audit entries were copied.
DROP TABLE inbox_order;
