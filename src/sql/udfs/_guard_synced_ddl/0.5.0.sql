CREATE FUNCTION syncular._guard_synced_ddl() RETURNS event_trigger
  AS 'MODULE_PATHNAME', 'syncular_guard_synced_ddl' LANGUAGE C;
