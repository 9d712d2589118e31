CREATE VIEW syncular.changes AS
SELECT x.partition, x.commit_seq, x.idx, x.tbl, x.row_id, x.op, x.row_version, x.scopes, x.payload
  FROM syncular.sync_changes x
UNION ALL
SELECT c.partition, c.commit_seq, 0, c.tbl, c.row_id, c.op, c.row_version, c.scopes, c.payload
  FROM syncular.sync_commits c
 WHERE c.tbl IS NOT NULL;
