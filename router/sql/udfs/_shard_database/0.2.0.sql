-- The database name of a logical shard (its connection string's dbname).
CREATE FUNCTION syncular._shard_database(shard integer) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  db text := substring(syncular.shard_connstr(shard) FROM '(?:^|\s)dbname=([^\s'']+)');
BEGIN
  IF db IS NULL THEN
    RAISE EXCEPTION 'syncular_router: the connection string of shard % names no dbname', shard
      USING ERRCODE = '22023',
            HINT = 'Write the p<i> options of server syncular as ''host=... port=... dbname=...''.';
  END IF;
  RETURN db;
END
$$;
