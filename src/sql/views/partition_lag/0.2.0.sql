-- Lag, from the catalog (no preload needed).
CREATE VIEW syncular.partition_lag AS
SELECT p.partition,
       p.max_commit_seq AS newest_commit_seq,
       (SELECT c.created_at_ms FROM syncular.sync_commits c
         WHERE c.partition = p.partition AND c.commit_seq = p.max_commit_seq) AS newest_commit_at_ms,
       coalesce(a.clients, 0) AS clients,
       coalesce(a.no_cursor, 0) AS clients_without_cursor,
       a.oldest_cursor AS oldest_client_cursor,
       p.max_commit_seq - a.oldest_cursor AS max_commits_behind,
       a.last_seen_at_ms
  FROM syncular.partitions p
  LEFT JOIN LATERAL (
    SELECT count(*) AS clients, count(*) FILTER (WHERE c.cursor < 0) AS no_cursor,
           min(c.cursor) FILTER (WHERE c.cursor >= 0) AS oldest_cursor,
           max(c.updated_at_ms) AS last_seen_at_ms
      FROM syncular.sync_clients c WHERE c.partition = p.partition) a ON true;
