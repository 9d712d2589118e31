-- syncular_router 0.4.0 -> 0.5.0 (ALTER EXTENSION syncular_router UPDATE TO '0.5.0').
-- The router's version follows the shards' syncular version (a gateway checks it).
\echo Use "ALTER EXTENSION syncular_router UPDATE TO '0.5.0'" to load this file. \quit

-- syncular_router install script, part 40: remote operations (REMOTE.md revision 1;
-- docs/operations-protocol.md).  operations_http and operations_watch_rerun are routed to the
-- shard of their partition like the round functions (part 10); the registrations are
-- cluster-wide calls (part 20), so every shard serves the same registry.

--#include udfs/_r_operations_http/0.5.0.sql
--#include udfs/_r_operations_http/0.5.0.comment.sql

--#include udfs/_operations_http/0.5.0.sql
--#include udfs/_operations_http/0.5.0.comment.sql

--#include udfs/operations_http/0.5.0.sql
--#include udfs/operations_http/0.5.0.comment.sql

--#include udfs/_r_operations_watch_rerun/0.5.0.sql
--#include udfs/_r_operations_watch_rerun/0.5.0.comment.sql

--#include udfs/operations_watch_rerun/0.5.0.sql
--#include udfs/operations_watch_rerun/0.5.0.comment.sql

--#include udfs/register_query/0.5.0.sql
--#include udfs/register_query/0.5.0.comment.sql

--#include udfs/register_queries/0.5.0.sql
--#include udfs/register_queries/0.5.0.comment.sql

--#include udfs/register_command/0.5.0.sql
--#include udfs/register_command/0.5.0.comment.sql

REVOKE EXECUTE ON FUNCTION syncular._r_operations_http(bytea, text, text, text),
  syncular._operations_http(bytea, text, text, text), syncular.operations_http(bytea, text, text, text),
  syncular._r_operations_watch_rerun(text, jsonb), syncular.operations_watch_rerun(text, jsonb),
  syncular.register_query(text, text, jsonb, text[], jsonb, text, jsonb, text, integer),
  syncular.register_queries(jsonb, integer, jsonb), syncular.register_command(text, text, text) FROM PUBLIC;
