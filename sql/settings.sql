-- settings: the syncular.* settings exist once the library is loaded; a fresh session sees them
-- only after a syncular function (or LOAD) loaded it, or when the library is preloaded
-- (session_preload_libraries / shared_preload_libraries, docs/settings.md).  A value SET before
-- the load is adopted.  Works in a private database (ALTER DATABASE ... SET).
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
CREATE DATABASE syncular_t_settings;
\c syncular_t_settings
SET client_min_messages = warning;
CREATE EXTENSION syncular;
RESET client_min_messages;
\set VERBOSITY terse
-- a fresh session: not loaded yet (CREATE EXTENSION ran in another backend)
\c syncular_t_settings
SHOW syncular.max_operations_per_request;
-- a value set before the load is kept when the library defines the setting
SET syncular.max_operations_per_request = 7;
SELECT count(*) > 0 AS catalogue FROM syncular.error_catalog();   -- any call loads the library
SHOW syncular.max_operations_per_request;
SHOW syncular.max_cascade_operations_per_commit;
-- ... and a bad value is refused from then on
SET syncular.max_operations_per_request = 0;
-- LOAD in a fresh session
\c syncular_t_settings
LOAD 'syncular';
SHOW syncular.max_operations_per_request;
-- preloaded for every session of the database: SHOW works at once
ALTER DATABASE syncular_t_settings SET session_preload_libraries = 'syncular';
\c syncular_t_settings
SHOW syncular.max_operations_per_request;
SELECT name, setting, context FROM pg_settings WHERE name LIKE 'syncular.%'
   AND name IN ('syncular.checkpoints', 'syncular.max_operations_per_request') ORDER BY name;
\c :orig_db
SET client_min_messages = warning;
DROP DATABASE syncular_t_settings;
