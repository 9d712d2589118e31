-- Hook: the RFC 0007 checkpoint barrier, run under the migration lock before the marker is read
-- (barrier-rfc0007.md §3.4 step 3).  Replaced by 60_barrier.sql; here it checks nothing.
CREATE FUNCTION syncular._checkpoint_barrier(checkpoints jsonb, running_version integer)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RETURN;  -- placeholder: sync.storage.checkpoint_incomplete goes here
END
$$;
