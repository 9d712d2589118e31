-- syncular_router 0.5.0 -> 0.6.0 (ALTER EXTENSION syncular_router UPDATE TO '0.6.0').
-- The router's version follows the shards' syncular version (a gateway checks it).
\echo Use "ALTER EXTENSION syncular_router UPDATE TO '0.6.0'" to load this file. \quit

-- every routed wrapper, re-created from the engine's signatures (router/routed.txt)
--#include udfs/_routed/0.6.0.sql

-- the wrappers new in 0.6.0 are owner-only until granted (90_grants.sql's model)
REVOKE EXECUTE ON FUNCTION syncular._r_realtime_ack_many(text, text[], text[], bigint[], text[]),
  syncular.realtime_ack_many(text, text[], text[], bigint[], text[]) FROM PUBLIC;
