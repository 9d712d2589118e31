-- syncular install script, part 22: host authentication in SQL (SPEC §1.1: "the host's
-- authenticate(request) runs on every HTTP request and WebSocket upgrade; its result supplies
-- actorId and the partition").  syncular-gateway uses it when it is not given a JWT key: the
-- registered function sees the request's method, path, headers and query and answers who is
-- calling, inside the same transaction as the round it authorizes.

ALTER TABLE syncular.sync_settings ADD COLUMN authenticator REGPROCEDURE;

--#include udfs/set_authenticator/0.2.0.sql
--#include udfs/set_authenticator/0.2.0.comment.sql

--#include udfs/authenticate/0.2.0.sql
--#include udfs/authenticate/0.2.0.comment.sql

--#include udfs/handle_http_authenticated/0.2.0.sql
--#include udfs/handle_http_authenticated/0.2.0.comment.sql
