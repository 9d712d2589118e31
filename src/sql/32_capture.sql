-- syncular install script, part 32: ordinary SQL writes to synced tables are sync commits
-- (docs/writing-with-sql.md).  ensure_schema installs these triggers on every synced table:
--   zz_syncular_capture       BEFORE INSERT OR UPDATE FOR EACH ROW: the row's _sync_* columns
--                             from its columns (named to sort after the app's BEFORE ROW
--                             triggers, which fire in name order, so it encodes what they leave)
--   syncular_capture_insert   AFTER INSERT FOR EACH STATEMENT, REFERENCING NEW TABLE
--   syncular_capture_update   AFTER UPDATE FOR EACH STATEMENT, REFERENCING OLD TABLE, NEW TABLE
--   syncular_capture_delete   AFTER DELETE FOR EACH STATEMENT, REFERENCING OLD TABLE
--   syncular_capture_truncate BEFORE TRUNCATE FOR EACH STATEMENT (the rows are logged as deletes)
-- MERGE fires the INSERT / UPDATE / DELETE triggers of its actions, COPY FROM the INSERT ones.

--#include udfs/_capture_row/0.4.0.sql
--#include udfs/_capture_row/0.4.0.comment.sql

--#include udfs/_capture_log/0.4.0.sql
--#include udfs/_capture_log/0.7.0.comment.sql

--#include udfs/_capture_bypass/0.4.0.sql
--#include udfs/_capture_bypass/0.4.0.comment.sql

--#include udfs/_install_capture/0.4.0.sql
--#include udfs/_install_capture/0.4.0.comment.sql

--#include udfs/_drop_capture/0.4.0.sql
--#include udfs/_drop_capture/0.4.0.comment.sql

--#include grants/_capture_row/0.4.0.sql

--#include udfs/_check_capture/0.4.0.sql
--#include udfs/_check_capture/0.4.0.comment.sql
REVOKE ALL ON FUNCTION syncular._check_capture(jsonb) FROM PUBLIC;
