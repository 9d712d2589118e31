CREATE FUNCTION syncular._synced_ddl(on_ boolean) RETURNS void
  AS 'MODULE_PATHNAME', 'syncular_synced_ddl' LANGUAGE C STRICT;
