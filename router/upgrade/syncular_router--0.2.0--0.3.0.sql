-- syncular_router 0.2.0 -> 0.3.0 (ALTER EXTENSION syncular_router UPDATE TO '0.3.0').
-- The router's version follows the shards' syncular version (a gateway checks it); 0.3.0
-- changes nothing in the router database: commit wake-ups (syncular.wait_commits) are read
-- from each shard directly.
\echo Use "ALTER EXTENSION syncular_router UPDATE TO '0.3.0'" to load this file. \quit
