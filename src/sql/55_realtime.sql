-- syncular install script, part 55: realtime (src/realtime.c, src/fanout.c; docs/realtime.md).
-- The extension side of SPEC §8: a stateless gateway holds the WebSockets and calls these.

--#include udfs/realtime_connect/0.2.0.sql

--#include udfs/realtime_fanout/0.2.0.sql

--#include udfs/realtime_fanout_arrays/0.7.0.sql

--#include udfs/realtime_registration_cache/0.7.0.sql

--#include udfs/realtime_ack/0.2.0.sql

--#include udfs/realtime_ack_many/0.6.0.sql

--#include udfs/presence_authorize/0.2.0.sql

--#include udfs/realtime_connect/0.2.0.comment.sql

--#include udfs/realtime_fanout/0.2.0.comment.sql

--#include udfs/realtime_fanout_arrays/0.7.0.comment.sql

--#include udfs/realtime_registration_cache/0.7.0.comment.sql

--#include udfs/realtime_ack/0.2.0.comment.sql

--#include udfs/realtime_ack_many/0.6.0.comment.sql

--#include udfs/presence_authorize/0.2.0.comment.sql
