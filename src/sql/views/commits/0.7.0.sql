CREATE VIEW syncular.commits AS
SELECT c.partition, c.commit_seq, c.client_id, c.client_commit_id, c.actor_id, c.created_at_ms,
       c.writer_version, coalesce(ch.changes, 0) AS changes, coalesce(ch.tables, '{}') AS tables
  FROM syncular.sync_commits c
  LEFT JOIN LATERAL (SELECT count(*) AS changes, array_agg(DISTINCT x.tbl ORDER BY x.tbl) AS tables
                       FROM syncular.changes x
                      WHERE x.partition = c.partition AND x.commit_seq = c.commit_seq) ch ON true;
