-- syncular install script, part 26: CRDT columns (SPEC §5.10).
--
-- The merger registry maps a crdtType to fn(stored bytea, incoming bytea) RETURNS bytea.  The
-- built-in `yjs-doc` merger is C (src/codec/yjs.c) and needs no registration; a registration
-- for `yjs-doc` replaces it.  ensure_schema refuses a crdt column whose crdtType is neither
-- yjs-doc nor registered, so a host registers its mergers before the schema that uses them.
-- The engine reads the registry on every merge (src/crdt.c): a change applies to the next push.

CREATE TABLE syncular.sync_crdt_mergers (
  crdt_type TEXT PRIMARY KEY CHECK (crdt_type <> ''),
  fn        REGPROCEDURE NOT NULL
);
COMMENT ON TABLE syncular.sync_crdt_mergers IS
  'CRDT merger registry (SPEC §5.10.2): crdtType -> fn(stored bytea, incoming bytea) RETURNS bytea. Written by syncular.set_crdt_merger; read by every push that merges a crdt column.';
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_crdt_mergers', '');
REVOKE ALL ON syncular.sync_crdt_mergers FROM PUBLIC;

CREATE FUNCTION syncular._crdt_type_known(crdt_type text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT crdt_type = 'yjs-doc'
      OR EXISTS (SELECT 1 FROM syncular.sync_crdt_mergers m WHERE m.crdt_type = _crdt_type_known.crdt_type)
$$;
COMMENT ON FUNCTION syncular._crdt_type_known(text) IS
  'Internal. True when crdt_type has a merger: the built-in yjs-doc or a type registered in syncular.sync_crdt_mergers (SPEC §5.10.1: ensure_schema refuses any other). NULL for NULL; raises nothing.';

CREATE FUNCTION syncular.set_crdt_merger(crdt_type text, fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF crdt_type IS NULL OR crdt_type = '' THEN
    PERFORM syncular._raise('sync.invalid_request', 'crdt_type must be a non-empty string',
                            jsonb_build_object('crdtType', crdt_type));
  END IF;
  IF fn IS NULL THEN
    DELETE FROM syncular.sync_crdt_mergers m WHERE m.crdt_type = set_crdt_merger.crdt_type;
  ELSE
    PERFORM syncular._check_hook_signature('crdt_merger', fn,
      ARRAY['bytea', 'bytea']::regtype[], 'bytea'::regtype, false,
      '(stored bytea, incoming bytea) RETURNS bytea, not STRICT');
    INSERT INTO syncular.sync_crdt_mergers AS m (crdt_type, fn) VALUES (set_crdt_merger.crdt_type, fn)
      ON CONFLICT ON CONSTRAINT sync_crdt_mergers_pkey DO UPDATE SET fn = EXCLUDED.fn;
  END IF;
END
$$;
COMMENT ON FUNCTION syncular.set_crdt_merger(text, regprocedure) IS
$$Registers the merger of one crdtType (SPEC §5.10.2), replacing any previous one, or unregisters it when fn is NULL.
fn must be a plain, non-STRICT function (stored bytea, incoming bytea) RETURNS bytea (argument names are free); stored is NULL for a new row or a NULL column. It must be commutative, associative and idempotent over the values it merges. Every applied upsert that presents the column stores, logs and serves fn(stored, incoming) (§5.10.3), called in the push transaction inside an internal subtransaction.
yjs-doc needs no registration (the built-in C merger); registering yjs-doc replaces the built-in, unregistering it restores it. ensure_schema refuses a crdt column whose crdtType is neither yjs-doc nor registered: register before ensure_schema. Unregistering a type the schema still uses is allowed; a push that presents such a column is then rejected with sync.crdt_merge_failed ("no CRDT merger registered"), as is a registration whose function was dropped.
At run time a merger that raises (the text goes to the server log) or returns NULL rejects the commit with sync.crdt_merge_failed ("CRDT merger failed"); serialization failures, resource errors, cancels and internal errors are re-raised.
Stored in syncular.sync_crdt_mergers. Owner-only.
Errors: sync.invalid_request (SQLSTATE 22023; details {crdtType}) for a NULL or empty crdt_type; sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a STRICT function, a procedure, an aggregate, a set-returning or variadic function.$$;

CREATE FUNCTION syncular.crdt_merge(crdt_type text, stored bytea, incoming bytea) RETURNS bytea
LANGUAGE c SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_crdt_merge';
COMMENT ON FUNCTION syncular.crdt_merge(text, bytea, bytea) IS
$$The merge a push applies to a crdt column (SPEC §5.10.2, §5.10.3): merge(stored, incoming) with the merger registered for crdt_type, else the built-in yjs-doc merger for 'yjs-doc'. stored NULL = no state yet.
yjs-doc: stored and incoming are Yjs updates (format v1; a document state is an update; empty bytes = the empty update); the result is one update equivalent to applying both: the structs of both unioned per client in clock order (a range present in both written once, a partly covered struct sliced, gaps kept as Skip structs) and the delete sets unioned. The result is canonical, so merge(a, b) = merge(b, a) and merge(m, m) = m byte for byte, and associative in document state. Bounds: at most 1048576 structs and 1048576 delete ranges over both inputs, `any` values nested at most 64 deep, JSON at most 512 deep; strings must be UTF-8, JSON contents valid JSON, clocks below 2^53.
Errors: sync.crdt_merge_failed (SQLSTATE XX000; details {crdtType, reason}) with message "no CRDT merger registered" (unknown type, or its registered function was dropped) or "CRDT merger failed" (a malformed update, e.g. reason "malformed Yjs update: truncated integer at byte 9", or a merger that raised or returned NULL); sync.invalid_request (SQLSTATE 22023) when crdt_type or incoming is NULL. Owner-only.$$;
