-- syncular install script, part 12: undoing a registration without dropping the extension.
--
-- syncular.unregister_schema(app_schema text, drop_tables boolean DEFAULT false) returns the
-- database to the state of a fresh CREATE EXTENSION: no registered schema, no hooks, no log, no
-- partitions.  Everything the extension keeps about the registered schema goes in one
-- transaction; the synced tables themselves are app data and are dropped only on request.

--#include udfs/unregister_schema/0.4.0-2.sql
--#include udfs/unregister_schema/0.4.0-2.comment.sql
