-- syncular_router 0.6.0 -> 0.7.0 (ALTER EXTENSION syncular_router UPDATE TO '0.7.0').
-- The router's version follows the shards' syncular version (a gateway checks it).
\echo Use "ALTER EXTENSION syncular_router UPDATE TO '0.7.0'" to load this file. \quit

-- every routed wrapper, re-created from the engine's signatures (router/routed.txt)
--#include generated/routed.sql
