CREATE FUNCTION syncular.revoke_lease(partition text, lease_id text) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  UPDATE syncular.sync_leases l
     SET revoked_at_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
   WHERE l.partition = revoke_lease.partition AND l.lease_id = revoke_lease.lease_id
     AND l.revoked_at_ms IS NULL
  RETURNING true
$$;
