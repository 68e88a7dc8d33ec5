-- The audit's by-node and by-rule indexes are keyed by node (or rule) first, so every
-- commit touched one page of each for every node it audited: with 64 busy senders more
-- than half of what a commit wrote to the WAL. New entries are written unfolded, outside
-- those indexes (audit_unfolded finds them), and the writer folds them in in bulk, every
-- 100 ms while writes come in, touching each node's page once per fold, not once per commit.
-- Every entry written before this migration is folded.
ALTER TABLE audit ADD COLUMN folded INTEGER NOT NULL DEFAULT 1;
DROP INDEX audit_by_actor;
DROP INDEX audit_by_target;
DROP INDEX audit_by_rule;
CREATE INDEX audit_by_actor ON audit (actor, id) WHERE folded = 1;
CREATE INDEX audit_by_target ON audit (target, id) WHERE folded = 1;
CREATE INDEX audit_by_rule ON audit (rule, id) WHERE rule IS NOT NULL AND folded = 1;
CREATE INDEX audit_unfolded ON audit (id) WHERE folded = 0;
