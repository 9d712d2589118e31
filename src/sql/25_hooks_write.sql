-- syncular install script, part 25: write-path hooks (DESIGN.md decision 7; push-and-pull.md §2.7,
-- §2.8; barrier-rfc0007.md §8; docs/hooks.md).
--
-- Row validators (§6.7) live in syncular.sync_row_validators (one per synced table); the commit
-- validator (§6.8) and the reaction planner (§6.9) in syncular.sync_settings.  Every registration
-- also rewrites the sync_settings row so that the C engine's per-backend cache (keyed by that row's
-- xmin/ctid, src/schema.c) reloads.  _validator_rejection is the one decoding rule that turns an
-- error raised by a hook into a push rejection.

-- Compact JSON text of a jsonb value: jsonb's own rendering (keys in jsonb order) without the
-- blanks jsonb puts after ',' and ':' outside strings.
CREATE FUNCTION syncular._compact_json(j jsonb) RETURNS text
LANGUAGE sql IMMUTABLE STRICT SET search_path = pg_catalog, pg_temp AS $$
  SELECT regexp_replace(j::text, '("(?:[^"\\]|\\.)*")|(,) |(:) ', '\1\2\3', 'g')
$$;
COMMENT ON FUNCTION syncular._compact_json(jsonb) IS
  'Internal. The compact JSON text of j: jsonb''s rendering (object keys in jsonb order, numbers as stored) with no whitespace outside strings, e.g. {"a":[1,"x, y"]}. Used for the byte limits of reaction payloads (push-and-pull.md §2.8) and rejection details (§2.4). NULL for NULL; raises nothing.';

-- Touches the settings singleton so that every backend's compiled-schema cache reloads.
CREATE FUNCTION syncular._touch_settings() RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp AS $$
  INSERT INTO syncular.sync_settings AS s (id) VALUES (1)
    ON CONFLICT (id) DO UPDATE SET id = s.id;
$$;
COMMENT ON FUNCTION syncular._touch_settings() IS
  'Internal. Writes a new version of the syncular.sync_settings singleton (created when absent) without changing it, so that the C engine''s per-backend cache, keyed by the row''s xmin/ctid (src/schema.c), reloads the hooks. Raises nothing.';

CREATE FUNCTION syncular.set_row_validator(tbl text, fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF tbl IS NULL OR NOT EXISTS (
       SELECT 1 FROM syncular.sync_settings s,
                     jsonb_array_elements(CASE WHEN jsonb_typeof(s.compiled -> 'tables') = 'array'
                                               THEN s.compiled -> 'tables' ELSE '[]'::jsonb END) t
        WHERE s.id = 1 AND t ->> 'name' = set_row_validator.tbl) THEN
    PERFORM syncular._raise('sync.unknown_table', 'table is not a synced table of the registered schema',
                            jsonb_build_object('table', tbl));
  END IF;
  IF fn IS NULL THEN
    DELETE FROM syncular.sync_row_validators v WHERE v.tbl = set_row_validator.tbl;
  ELSE
    PERFORM syncular._check_hook_signature('row_validator', fn,
      ARRAY['text', 'text', 'text', 'jsonb', 'jsonb', 'text', 'text']::regtype[], 'void'::regtype, false,
      '(op text, tbl text, row_id text, new_row jsonb, stored_row jsonb, actor_id text, partition text) RETURNS void, not STRICT');
    INSERT INTO syncular.sync_row_validators AS v (tbl, fn) VALUES (set_row_validator.tbl, fn)
      ON CONFLICT ON CONSTRAINT sync_row_validators_pkey DO UPDATE SET fn = EXCLUDED.fn;
  END IF;
  PERFORM syncular._touch_settings();
END
$$;
COMMENT ON FUNCTION syncular.set_row_validator(text, regprocedure) IS
$$Registers the §6.7 row validator of one synced table (SPEC §6.7; docs/hooks.md), replacing any previous one, or unregisters it when fn is NULL.
tbl must name a table of the compiled schema (syncular.sync_settings.compiled); fn must be a plain, non-STRICT function (op text, tbl text, row_id text, new_row jsonb, stored_row jsonb, actor_id text, partition text) RETURNS void (argument names are free). The engine calls it in the push transaction, before the row write, with op 'upsert' or 'delete', the row that will persist (NULL for a delete) and the stored row (NULL for an insert), both as syncular.decode_row JSON; it rejects with RAISE ... USING ERRCODE = 'SY001' (see syncular._validator_rejection).
Stored in syncular.sync_row_validators; rewrites the sync_settings row so that cached hooks reload. Owner-only.
Errors: sync.unknown_table (SQLSTATE 42P01; details {table}) when tbl is NULL, no schema is registered or the table is not in it (also when unregistering); sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a STRICT function, a procedure, an aggregate, a window, set-returning or variadic function.$$;

CREATE FUNCTION syncular.set_commit_validator(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('commit_validator', fn,
      ARRAY['jsonb', 'text', 'text', 'text', 'text']::regtype[], 'void'::regtype, true,
      '(operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS void');
  END IF;
  -- the singleton row may not exist yet (ensure_schema not called): app_schema stays NULL
  INSERT INTO syncular.sync_settings AS s (id, commit_validator) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET commit_validator = EXCLUDED.commit_validator;
END
$$;
COMMENT ON FUNCTION syncular.set_commit_validator(regprocedure) IS
$$Registers the §6.8 whole-commit validator (SPEC §6.8; docs/hooks.md), or unregisters it when fn is NULL.
fn must be a plain function (operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS void (argument names are free). The engine calls it once per new commit, after every operation and the reference pass, before the append, in the push transaction; operations is the ordered evidence [{opIndex, op, table, rowId, row, stored, storedServerVersion, nextServerVersion}] (docs/hooks.md). It rejects with RAISE ... USING ERRCODE = 'SY001', DETAIL = '{"code": ..., "opIndex": n}' (see syncular._validator_rejection).
Stored in syncular.sync_settings.commit_validator (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a window, set-returning or variadic function.$$;

CREATE FUNCTION syncular.set_reaction_planner(fn regprocedure) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF fn IS NOT NULL THEN
    PERFORM syncular._check_hook_signature('reaction_planner', fn,
      ARRAY['jsonb', 'text', 'text', 'text', 'text']::regtype[], 'jsonb'::regtype, true,
      '(operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS jsonb');
  END IF;
  INSERT INTO syncular.sync_settings AS s (id, reaction_planner) VALUES (1, fn)
    ON CONFLICT (id) DO UPDATE SET reaction_planner = EXCLUDED.reaction_planner;
END
$$;
COMMENT ON FUNCTION syncular.set_reaction_planner(regprocedure) IS
$$Registers the §6.9 reaction planner (SPEC §6.9; docs/hooks.md), or unregisters it when fn is NULL.
fn must be a plain function (operations jsonb, client_id text, client_commit_id text, actor_id text, partition text) RETURNS jsonb (argument names are free), called like the commit validator but only for a new commit that passed every validator; it returns a JSON array of reaction records [{key, type, version, payload, maxAttempts?}] (or NULL / [] for none), which the engine hands to syncular._enqueue_reactions in the same transaction. Any error it raises, or an invalid record, aborts the commit as a server failure (sync.internal_error, nothing persisted).
Stored in syncular.sync_settings.reaction_planner (the singleton row is created when absent). Owner-only.
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a window, set-returning or variadic function.$$;

CREATE FUNCTION syncular._validator_rejection(sqlstate text, detail text, message text DEFAULT NULL)
RETURNS jsonb LANGUAGE C IMMUTABLE SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_validator_rejection';
COMMENT ON FUNCTION syncular._validator_rejection(text, text, text) IS
$$Internal; the decoding rule the C push engine applies to an error raised by a row validator or the commit validator (push-and-pull.md §2.7; barrier-rfc0007.md §8.4; errors.md §3.1; docs/hooks.md).
Arguments: sqlstate = the error's SQLSTATE (5 characters), detail = its DETAIL text, message = its MESSAGE text (optional, used only as a fallback).
A hook rejects with: RAISE EXCEPTION '<message>' USING ERRCODE = 'SY001', DETAIL = '{"code": "app.quota", "message": "...", "details": {...}, "opIndex": n}'. SY001 is in the custom SQLSTATE class SY that this extension reserves for hook rejections. In DETAIL (a JSON object; other members are ignored):
  code     required, a non-empty JSON string that does not start with sync., blob., operation., presence. or client. (case-sensitive);
  message  optional string; when absent, null or empty the error MESSAGE is used, and when that is NULL or empty the code;
  details  optional object (null = absent) whose compact JSON is at most 4,096 UTF-8 bytes (the PUSH_RESULT_DETAILS bound); not checked further;
  opIndex  optional integer 0..2147483647 (null = absent); meaningful only for the commit validator (the engine ignores it for a row validator and checks it against the operation count).
Returns {"code", "message", "details"?, "opIndex"?} for a well-formed rejection, and NULL for anything else (another SQLSTATE, NULL or unparsable DETAIL, a non-object, a missing / empty / non-string / reserved code, a non-string message, non-object or oversized details, a bad opIndex): NULL means the engine answers sync.constraint_violation with the fixed message ("write validator failed" / "whole-commit validator failed"). Never raises.$$;
