-- syncular_router install script, part 00: the shard map, routing hash and error mapping.
--
-- The router database holds no sync data.  Its schema "syncular" has the serving surface of the
-- syncular extension with the same names and argument lists; each function runs on the shard
-- databases through PL/Proxy (CLUSTER 'syncular'), whose shard map is the SQL/MED server
-- "syncular" (options p0 .. pN-1, a power of two; docs/scaling.md).
--
-- Conventions:
--   * syncular._r_* are the PL/Proxy functions (one remote call each); the public functions are
--     plpgsql wrappers that call them and map PL/Proxy's errors (syncular._route_error).
--   * A partition-keyed call runs on logical shard hashtext(partition) & (N - 1), PL/Proxy's own
--     mapping; a NULL partition is sent to the shard of '' so that the shard refuses it as it
--     refuses it when called directly.
--   * The wrappers are SECURITY INVOKER: PL/Proxy connects to the shards with the user mapping
--     of the calling role, so the shard's own grants (its 90_grants.sql) decide what may run.

\echo Use "CREATE EXTENSION syncular_router" to load this file. \quit

--#include udfs/shard_hash/0.2.0.sql
--#include udfs/shard_hash/0.2.0.comment.sql

--#include udfs/shard_count/0.2.0.sql
--#include udfs/shard_count/0.2.0.comment.sql

--#include udfs/shard_of/0.2.0.sql
--#include udfs/shard_of/0.2.0.comment.sql

--#include udfs/shard_connstr/0.2.0.sql
--#include udfs/shard_connstr/0.2.0.comment.sql

--#include udfs/_unavailable_body/0.2.0.sql
--#include udfs/_unavailable_body/0.2.0.comment.sql

--#include udfs/_shard_failed/0.2.0.sql
--#include udfs/_shard_failed/0.2.0.comment.sql

--#include udfs/_route_error/0.2.0.sql
--#include udfs/_route_error/0.2.0.comment.sql
