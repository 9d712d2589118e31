CREATE FUNCTION syncular.revoke_leases(partition text, actor_id text) RETURNS integer
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  WITH r AS (
    UPDATE syncular.sync_leases l
       SET revoked_at_ms = syncular.now_ms()
     WHERE l.partition = revoke_leases.partition AND l.actor_id = revoke_leases.actor_id
       AND l.revoked_at_ms IS NULL
    RETURNING 1)
  SELECT count(*)::integer FROM r
$$;
