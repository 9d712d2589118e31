CREATE INDEX sync_leases_by_actor ON syncular.sync_leases (partition, actor_id);
