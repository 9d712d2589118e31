-- syncular 0.6.0 -> 0.7.0 (ALTER EXTENSION syncular UPDATE TO '0.7.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.7.0'" to load this file. \quit

-- Realtime fanout with the registrations as text (src/fanout.c, src/fanout_regs.c): the gateway
-- passes each socket's registration text and the backend reuses its parse from commit to commit.
--#include udfs/realtime_fanout_arrays/0.7.0.sql
--#include udfs/realtime_fanout_arrays/0.7.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[]) FROM PUBLIC;
--#include grants/realtime_fanout_arrays/0.7.0.sql

-- The per-backend registration cache, observable (src/fanout_regs.c): realtime_connect now
-- parses the registration it answers into it.
--#include udfs/realtime_registration_cache/0.7.0.sql
--#include udfs/realtime_registration_cache/0.7.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.realtime_registration_cache() FROM PUBLIC;
