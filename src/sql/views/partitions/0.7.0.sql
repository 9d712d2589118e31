CREATE VIEW syncular.partitions AS
SELECT coalesce(p.partition, r.partition)          AS partition,
       greatest(coalesce((SELECT c.commit_seq FROM syncular.sync_commits c
                           WHERE c.partition = coalesce(p.partition, r.partition)
                           ORDER BY c.commit_seq DESC LIMIT 1), 0),
                coalesce(p.horizon_seq, 0)) AS max_commit_seq,
       coalesce(p.horizon_seq, 0)                  AS horizon_seq,
       r.log_epoch,
       r.last_authenticated_at_ms,
       (SELECT count(*) FROM syncular.sync_clients c
         WHERE c.partition = coalesce(p.partition, r.partition)) AS clients
  FROM syncular.sync_partitions p
  FULL JOIN syncular.sync_partition_registry r ON r.partition = p.partition;
