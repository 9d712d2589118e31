CREATE VIEW syncular.client_lag AS
SELECT c.partition, c.client_id, c.actor_id, c.wire_version, c.cursor,
       n.seq AS newest_commit_seq,
       CASE WHEN c.cursor >= 0 THEN greatest(n.seq - c.cursor, 0) END AS commits_behind,
       (c.cursor >= 0 AND c.cursor < coalesce(p.horizon_seq, 0)) AS behind_horizon,
       c.updated_at_ms AS last_seen_at_ms,
       syncular.now_ms() - c.updated_at_ms AS idle_ms
  FROM syncular.sync_clients c
  LEFT JOIN syncular.sync_partitions p ON p.partition = c.partition
  CROSS JOIN LATERAL (SELECT greatest(coalesce((SELECT m.commit_seq FROM syncular.sync_commits m
                                                WHERE m.partition = c.partition
                                                ORDER BY m.commit_seq DESC LIMIT 1), 0),
                                      coalesce(p.horizon_seq, 0)) AS seq) n;
