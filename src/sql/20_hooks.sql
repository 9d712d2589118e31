-- syncular install script, part 20: hook registration (DESIGN.md decision 7).
--
-- Hooks are plain SQL-callable functions registered by regprocedure in syncular.sync_settings.

--#include udfs/_check_hook_signature/0.1.0.sql
--#include udfs/_check_hook_signature/0.1.0.comment.sql

--#include udfs/set_scope_resolver/0.1.0.sql
--#include udfs/set_scope_resolver/0.2.0-2.comment.sql
