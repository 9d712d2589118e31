-- syncular_router 0.6.0 -> 0.7.0 (ALTER EXTENSION syncular_router UPDATE TO '0.7.0').
-- The router's version follows the shards' syncular version (a gateway checks it).
\echo Use "ALTER EXTENSION syncular_router UPDATE TO '0.7.0'" to load this file. \quit

-- every routed wrapper, re-created from the engine's signatures (router/routed.txt)
--#include generated/routed.sql

-- the wrappers new in 0.7.0 are owner-only until granted (90_grants.sql's model); then the
-- engine delta's grant block, one source file under the engine's root
REVOKE EXECUTE ON FUNCTION syncular._r_realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[]),
  syncular.realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[]),
  syncular._r_segment_download(text, text, text, jsonb, text, text, text),
  syncular.segment_download(text, text, text, jsonb, text, text, text) FROM PUBLIC;
--#include ../../src/sql/grants/realtime_fanout_arrays/0.7.0.sql
