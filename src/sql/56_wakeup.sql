-- syncular install script, part 56: commit wake-ups for realtime gateways (src/wakeup.c;
-- docs/realtime.md "Commit wake-ups").  The ring exists only when the library is in
-- shared_preload_libraries; without it commits wake gateways through NOTIFY syncular_commit.

--#include udfs/commit_wakeup_mode/0.3.0.sql
--#include udfs/commit_wakeup_mode/0.3.0.comment.sql

--#include udfs/wait_commits/0.3.0.sql
--#include udfs/wait_commits/0.3.0.comment.sql
