-- syncular 0.4.0 -> 0.5.0 (ALTER EXTENSION syncular UPDATE TO '0.5.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.5.0'" to load this file. \quit

-- The writer fence trigger function in C (src/fence.c): the same refusal, one primary-key probe
-- per appended commit instead of a PL/pgSQL body and an SQL statement.
CREATE OR REPLACE FUNCTION syncular.syncular_writer_fence() RETURNS trigger
LANGUAGE C SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_writer_fence';
