CREATE VIEW syncular.clients AS
SELECT c.partition, c.client_id, c.actor_id, c.wire_version, c.cursor, c.subscriptions, c.updated_at_ms,
       (c.cursor >= 0 AND c.cursor < coalesce(p.horizon_seq, 0)) AS behind_horizon
  FROM syncular.sync_clients c
  LEFT JOIN syncular.sync_partitions p ON p.partition = c.partition;
