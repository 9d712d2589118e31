-- syncular 0.5.0 -> 0.6.0 (ALTER EXTENSION syncular UPDATE TO '0.6.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.6.0'" to load this file. \quit

-- The schema compiler is C (src/schema_compile.c); same name, signature, volatility and
-- search_path, so CREATE OR REPLACE swaps the body in place and keeps the COMMENT and grants.
CREATE OR REPLACE FUNCTION syncular._compile_schema(ir jsonb, app_schema text DEFAULT NULL) RETURNS jsonb
LANGUAGE C STABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'sync_compile_schema';

-- The body of ensure_schema is C too (src/schema_ensure.c); same signature, volatility and
-- search_path.
CREATE OR REPLACE FUNCTION syncular._ensure_schema(ir jsonb, checkpoints jsonb, app_schema text, caller_schema text)
RETURNS jsonb
LANGUAGE C SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'sync_ensure_schema';
