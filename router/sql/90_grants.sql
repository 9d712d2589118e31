-- syncular_router install script, part 90: privileges.
--
-- The same model as the syncular extension's 90_grants.sql: nothing is executable by PUBLIC; the
-- public functions are SECURITY DEFINER with a fixed search_path, so PL/Proxy reaches the shards
-- with the user mapping of the extension owner, and the router's grants decide who may serve
-- which call.  Operators grant per role, for example:
--
--   GRANT EXECUTE ON FUNCTION syncular.handle_http(bytea, text, text, text) TO sync_gateway;
--   GRANT EXECUTE ON FUNCTION syncular.handle(bytea, text, text)            TO sync_gateway;
--
-- Cluster-wide calls (ensure_schema, set_*), maintenance and the barrier stay owner-only.

GRANT USAGE ON SCHEMA syncular TO PUBLIC;
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;
