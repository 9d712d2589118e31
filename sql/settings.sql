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
-- the C library's heap trimming (backend_memory.c): 4 MB kept by default, 0 leaves the C
-- library alone, at most 32 MB (glibc's largest mmap threshold), set by the operator only
SHOW syncular.malloc_trim_threshold;
SELECT setting, unit, min_val, max_val, context FROM pg_settings WHERE name = 'syncular.malloc_trim_threshold';
SET syncular.malloc_trim_threshold = '1MB';
SHOW syncular.malloc_trim_threshold;
SET syncular.malloc_trim_threshold = 0;
SET syncular.malloc_trim_threshold = '64MB';
CREATE ROLE syncular_t_settings_app;
SET ROLE syncular_t_settings_app;
SET syncular.malloc_trim_threshold = '2MB';
RESET ROLE;
DROP ROLE syncular_t_settings_app;
\c :orig_db
SET client_min_messages = warning;
DROP DATABASE syncular_t_settings;
