-- syncular_router install script, part 10: the calls routed to the shard of their partition.
--
-- Each public function has the signature of the syncular function of the same name and runs it
-- on one shard: PL/Proxy sends "select ... from syncular.<name>($1::type, ...)" to the logical
-- shard of hashtext(partition), in its own transaction there (autocommit; no two-phase commit
-- with the router's transaction).  The procedure syncular.sync is not routed (PL/Proxy calls
-- functions only); a routed handle() commits when its round ends, as a one-round procedure call.

--#include types/sync_reactions/0.2.0.sql
--#include comments/sync_reactions/0.2.0.sql

-- The wrappers, generated from router/routed.txt and the engine's install script
-- (scripts/gen-router-routed.py), so that their signatures are the engine's.
--#include generated/routed.sql

