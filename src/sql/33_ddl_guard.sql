-- syncular install script, part 33: DDL on a synced table outside ensure_schema is refused
-- (src/ddl_guard.c; docs/writing-with-sql.md).  The layout of a synced table is the compiled
-- schema's (data-model-and-storage.md §6) and changes only through ensure_schema's append-only
-- bump (§7), which marks its own DDL with syncular._synced_ddl; a superuser repairing by hand
-- sets syncular.allow_synced_table_ddl.  The event triggers are members of the extension: they
-- come with CREATE EXTENSION (also in a database pg_restore fills; pg_dump does not dump them)
-- and go with DROP EXTENSION.

--#include udfs/_guard_synced_ddl/0.5.0.sql
--#include udfs/_guard_synced_ddl/0.5.0.comment.sql

--#include udfs/_synced_ddl/0.5.0.sql
--#include udfs/_synced_ddl/0.5.0.comment.sql

--#include udfs/_synced_table_of/0.5.0.sql
--#include udfs/_synced_table_of/0.5.0.comment.sql

--#include udfs/_synced_table_dropped/0.5.0.sql
--#include udfs/_synced_table_dropped/0.5.0.comment.sql

--#include grants/_guard_synced_ddl/0.5.0.sql

--#include triggers/syncular_guard_alter/0.5.0.sql
--#include comments/syncular_guard_alter/0.5.0.sql
--#include triggers/syncular_guard_drop/0.5.0.sql
--#include comments/syncular_guard_drop/0.5.0.sql
