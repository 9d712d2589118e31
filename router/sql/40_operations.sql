-- syncular_router install script, part 40: remote operations (REMOTE.md revision 1;
-- docs/operations-protocol.md).  operations_http and operations_watch_rerun are routed to the
-- shard of their partition like the round functions (part 10); the registrations are
-- cluster-wide calls (part 20), so every shard serves the same registry.

--#include udfs/_r_operations_http/0.5.0.sql
--#include udfs/_r_operations_http/0.5.0.comment.sql

--#include udfs/_operations_http/0.5.0.sql
--#include udfs/_operations_http/0.5.0.comment.sql

--#include udfs/operations_http/0.5.0.sql
--#include udfs/operations_http/0.5.0.comment.sql

--#include udfs/_r_operations_watch_rerun/0.5.0.sql
--#include udfs/_r_operations_watch_rerun/0.5.0.comment.sql

--#include udfs/operations_watch_rerun/0.5.0.sql
--#include udfs/operations_watch_rerun/0.5.0.comment.sql

--#include udfs/register_query/0.5.0.sql
--#include udfs/register_query/0.5.0.comment.sql

--#include udfs/register_queries/0.5.0.sql
--#include udfs/register_queries/0.5.0.comment.sql

--#include udfs/register_command/0.5.0.sql
--#include udfs/register_command/0.5.0.comment.sql
