-- syncular install script, part 80: the shard side of cluster-wide calls.
--
-- A sharded deployment (docs/scaling.md: the syncular_router extension and PL/Proxy) runs
-- schema registration and hook registration on every shard.  PL/Proxy runs each remote call in
-- its own transaction, with no two-phase commit, so "fail as a whole" is built in two rounds:
-- first every shard checks the call (runs it and rolls it back), then, only when every shard
-- accepted, every shard applies it.  cluster_call is the one shard entry point for both rounds.

--#include udfs/_cluster_dispatch/0.5.0.sql
--#include udfs/_cluster_dispatch/0.5.0.comment.sql

--#include udfs/cluster_call/0.2.0.sql
--#include udfs/cluster_call/0.5.0.comment.sql
