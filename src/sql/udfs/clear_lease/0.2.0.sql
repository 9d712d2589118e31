CREATE FUNCTION syncular.clear_lease(partition text, lease_id text) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  DELETE FROM syncular.sync_leases l
   WHERE l.partition = clear_lease.partition AND l.lease_id = clear_lease.lease_id
  RETURNING true
$$;
