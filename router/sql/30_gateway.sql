-- syncular_router install script, part 30: the surface syncular-gateway uses (docs/gateway.md,
-- docs/scaling.md "The gateway in front of the router").
--
--   * realtime_connect, realtime_fanout, realtime_ack, realtime_ack_many and presence_authorize are
--     routed to the shard of their partition like the round functions (part 10, router/routed.txt);
--   * the SQL authenticator lives in the router database itself: it answers which partition a
--     request belongs to, so it runs before any shard is chosen.  set_authenticator registers it
--     here (table syncular.router_settings), authenticate runs it here, and
--     handle_http_authenticated runs it and then the routed handle_http (SPEC §1.1);
--   * shard_conninfos lists the distinct shard databases, so that the gateway LISTENs on every
--     one of them (NOTIFY syncular_commit is issued by the shard that commits, SPEC §8.2).

-- ---------------------------------------------------------------- the shard databases to LISTEN on

--#include udfs/shard_conninfos/0.2.0.sql
--#include udfs/shard_conninfos/0.2.0.comment.sql

-- ---------------------------------------------------------------- the SQL authenticator (SPEC §1.1)

--#include tables/router_settings/0.2.0.sql
--#include comments/router_settings/0.2.0.sql
SELECT pg_catalog.pg_extension_config_dump('syncular.router_settings', '');

--#include udfs/set_authenticator/0.2.0.sql
--#include udfs/set_authenticator/0.2.0.comment.sql

--#include udfs/authenticate/0.2.0.sql
--#include udfs/authenticate/0.2.0.comment.sql

--#include udfs/_auth_error_body/0.2.0.sql
--#include udfs/_auth_error_body/0.2.0.comment.sql

--#include udfs/_handle_http_authenticated/0.2.0.sql
--#include udfs/_handle_http_authenticated/0.2.0.comment.sql

--#include udfs/handle_http_authenticated/0.2.0.sql
--#include udfs/handle_http_authenticated/0.2.0.comment.sql
