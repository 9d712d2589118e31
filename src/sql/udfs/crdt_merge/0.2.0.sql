CREATE FUNCTION syncular.crdt_merge(crdt_type text, stored bytea, incoming bytea) RETURNS bytea
LANGUAGE c SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_crdt_merge';
