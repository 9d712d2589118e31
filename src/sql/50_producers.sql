-- syncular install script, part 50: SQL producers.
-- syncular.push / syncular.pull take and return JSON (rows as objects keyed by column name) and
-- run the same engine as clients: they build an SSP2 wire-3 request, serve it with
-- syncular.handle(), and render the response.  For backend code (jobs, admin tools, triggers in
-- other systems) and for debugging.  push and pull are SECURITY DEFINER (like handle), so a role
-- with EXECUTE on them needs no privileges on the catalog.

--#include udfs/_producer_epoch/0.1.0.sql

--#include udfs/_bitmap_columns/0.1.0.sql

--#include udfs/push/0.7.0.sql

--#include udfs/push/0.1.0.comment.sql

--#include udfs/_pull_sections/0.7.0.sql

--#include udfs/_pull_sections/0.7.0.comment.sql

--#include udfs/pull/0.7.0.sql

--#include udfs/pull/0.1.0.comment.sql
