-- syncular install script, part 26: CRDT columns (SPEC §5.10).
--
-- The merger registry maps a crdtType to fn(stored bytea, incoming bytea) RETURNS bytea.  The
-- built-in `yjs-doc` merger is C (src/codec/yjs.c) and needs no registration; a registration
-- for `yjs-doc` replaces it.  ensure_schema refuses a crdt column whose crdtType is neither
-- yjs-doc nor registered, so a host registers its mergers before the schema that uses them.
-- The engine reads the registry on every merge (src/crdt.c): a change applies to the next push.

--#include tables/sync_crdt_mergers/0.2.0.sql
--#include comments/sync_crdt_mergers/0.2.0.sql
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_crdt_mergers', '');
REVOKE ALL ON syncular.sync_crdt_mergers FROM PUBLIC;

--#include udfs/_crdt_type_known/0.2.0.sql
--#include udfs/_crdt_type_known/0.2.0.comment.sql

--#include udfs/set_crdt_merger/0.2.0.sql
--#include udfs/set_crdt_merger/0.2.0.comment.sql

--#include udfs/crdt_merge/0.2.0.sql
--#include udfs/crdt_merge/0.2.0.comment.sql
