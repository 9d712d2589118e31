-- syncular install script, part 36: debugging (src/debug_render.c, src/debug_encode.c).

--#include udfs/debug_render/0.1.0.sql
--#include udfs/debug_render/0.2.0.comment.sql

--#include udfs/debug_encode/0.1.0.sql
--#include udfs/debug_encode/0.1.0.comment.sql
