CREATE VIEW syncular.client_lag AS
SELECT c.partition, c.client_id, c.actor_id, c.wire_version, c.cursor,
       coalesce(p.max_commit_seq, 0) AS newest_commit_seq,
       CASE WHEN c.cursor >= 0 THEN greatest(coalesce(p.max_commit_seq, 0) - c.cursor, 0) END AS commits_behind,
       (c.cursor >= 0 AND c.cursor < coalesce(p.horizon_seq, 0)) AS behind_horizon,
       c.updated_at_ms AS last_seen_at_ms,
       (extract(epoch FROM pg_catalog.now()) * 1000)::bigint - c.updated_at_ms AS idle_ms
  FROM syncular.sync_clients c
  LEFT JOIN syncular.sync_partitions p ON p.partition = c.partition;
