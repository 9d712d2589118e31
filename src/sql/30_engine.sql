-- syncular install script, part 30: the engine's SQL entry points (src/sql_api.c).

--#include udfs/handle/0.1.0.sql
--#include udfs/handle/0.7.0.comment.sql

--#include udfs/handle_http/0.1.0.sql
--#include udfs/handle_http/0.2.0.comment.sql

--#include udfs/sync/0.1.0.sql
--#include udfs/sync/0.1.0.comment.sql
