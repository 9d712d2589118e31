-- syncular 0.1.0 -> 0.2.0 (ALTER EXTENSION syncular UPDATE TO '0.2.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.2.0'" to load this file. \quit

-- comments changed since 0.1.0 (the read rule, debug_render's escapes, handle on a hot standby)
COMMENT ON FUNCTION syncular.handle(bytea, text, text) IS
'Serves one Syncular sync round (SSP2 request bytes in, SSP2 response bytes out) inside the calling transaction. '
'request: an SSP2 request message, wire version 2 or 3 (the response uses the same version). '
'partition: the tenant the host authenticated the caller into; actor_id: the authenticated actor. '
'Pushes (SPEC §6, push-and-pull.md §2) run one subtransaction per commit and lock the partition row until the '
'caller''s transaction ends; pulls (§4) read one snapshot taken after the pushes. Applied commits NOTIFY '
'syncular_commit with payload base64url(partition) || '':'' || commit_seq, delivered at commit. '
'Protocol outcomes (schema floor, epoch reset, rejected commits, conflicts, revoked or reset subscriptions) are '
'encoded in the response. Request-level failures are raised with DETAIL {"code": ..., "details": ...}: '
'sync.invalid_request (22023: undecodable message, response-kind message, wire version 1, pushes without '
'logEpoch, accept without bit 0 or 1, NULL arguments), sync.empty_commit (22023), '
'sync.invalid_client_id (22023: reserved ["remote-command", prefix or clientId bound to another actor), '
'sync.too_many_operations (54000: more than syncular.max_operations_per_request operations), '
'sync.invalid_subscription (22023: duplicate id, undeclared key, ''*'' value, resolver key outside the schema), '
'sync.unknown_table (42P01: subscription table not served), sync.schema_not_ready (55000: no schema '
'registered; a round with pushes on a hot standby, details {"hotStandby": true}, where pull-only rounds are '
'served and write nothing), sync.internal_error (XX000: unexpected failure; fixed message, the cause goes to the server log). '
'SECURITY DEFINER with search_path = pg_catalog, pg_temp: a role needs only EXECUTE (see 90_grants.sql); hooks run '
'as the extension owner and must qualify the names they use.';
COMMENT ON FUNCTION syncular.debug_render(bytea) IS
'Canonical JSON rendering (SPEC §11) of an SSP2 request or response, or of an SSG2 rows segment (detected '
'by its magic). Bytes are base64, json-typed fields are parsed JSON values. Bytes that do not decode raise '
'the decode error''s catalogue code (sync.invalid_request, or sync.empty_commit) in DETAIL. A string (str field, '
'json-typed field, key) holding U+0000 or a lone UTF-16 surrogate, which jsonb cannot store, renders with its '
'escape kept as text: U+0000 reads back as the six characters \u0000 (its backslash escaped). A value jsonb '
'cannot hold at all (a number beyond numeric''s range) raises sync.invalid_request (SQLSTATE 22023) with details '
'{"sqlstate": <the jsonb_in SQLSTATE>}.';
COMMENT ON FUNCTION syncular.set_scope_resolver(regprocedure) IS
$$Registers the scope resolver (DESIGN.md decision 7; data-model-and-storage.md §3.2), or unregisters it when fn is NULL.
fn must be a plain function (text, text, text) RETURNS jsonb, called as (actor_id, partition, client_id) and returning the allowed scopes {variable: [values] | "*"}; it runs in the push/pull transaction.
Stored in syncular.sync_settings.scope_resolver (the singleton row is created when absent). Owner-only.
Reads and writes obey one rule: a row is written (§3.4) or delivered to a subscription only when its value of every scope variable its table declares is allowed (a variable missing from the map, null or [] allows nothing; a declared variable allowing nothing revokes the subscription).
At run time a resolver that raises, returns NULL or another shape, or is not executable (or no resolver at all) fails closed: every subscription of the round revoked, every write sync.forbidden; one WARNING per round names the actor, the partition and the reason (never in the response).
Errors: sync.storage.hook_signature (SQLSTATE 22023; details {hook, function, expected}) for any other signature, a procedure, an aggregate, a set-returning or variadic function.$$;

-- cluster-wide calls through the syncular_router extension (src/sql/80_cluster.sql)
CREATE FUNCTION syncular._cluster_dispatch(call text, args jsonb) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF args IS NULL OR jsonb_typeof(args) <> 'object' THEN
    PERFORM syncular._raise('sync.invalid_request', 'cluster call arguments must be a JSON object',
                            jsonb_build_object('call', call));
  END IF;
  CASE call
  WHEN 'ensure_schema' THEN
    -- no caller schema crosses the router: the app schema is the registered one, the one given,
    -- or public (10_schema.sql: app_schema, else the registered schema, else the caller's).
    -- A checkpoint declaration the router tagged with the database of its partition's shard is
    -- installed on that shard only: elsewhere it would never be activated and would close the
    -- serve gate of every partition there.
    RETURN syncular._ensure_schema(args -> 'ir',
             CASE WHEN jsonb_typeof(args -> 'checkpoints') = 'array'
                  THEN (SELECT coalesce(jsonb_agg(d - 'shardDatabase' ORDER BY i), '[]'::jsonb)
                          FROM jsonb_array_elements(args -> 'checkpoints') WITH ORDINALITY x(d, i)
                         WHERE jsonb_typeof(d) <> 'object' OR NOT d ? 'shardDatabase'
                            OR d ->> 'shardDatabase' = current_database())
                  ELSE coalesce(args -> 'checkpoints', '[]'::jsonb) END,
             syncular._jstr(args, 'appSchema'), 'public');
  WHEN 'set_scope_resolver' THEN
    PERFORM syncular.set_scope_resolver(syncular._jstr(args, 'fn')::regprocedure);
  WHEN 'set_row_validator' THEN
    PERFORM syncular.set_row_validator(syncular._jstr(args, 'table'), syncular._jstr(args, 'fn')::regprocedure);
  WHEN 'set_commit_validator' THEN
    PERFORM syncular.set_commit_validator(syncular._jstr(args, 'fn')::regprocedure);
  WHEN 'set_reaction_planner' THEN
    PERFORM syncular.set_reaction_planner(syncular._jstr(args, 'fn')::regprocedure);
  ELSE
    PERFORM syncular._raise('sync.invalid_request', 'unknown cluster call', jsonb_build_object('call', call));
  END CASE;
  RETURN jsonb_build_object('call', call);
END
$$;
COMMENT ON FUNCTION syncular._cluster_dispatch(text, jsonb) IS
'Internal. Runs one cluster-wide call by name (ensure_schema, set_scope_resolver, set_row_validator, '
'set_commit_validator, set_reaction_planner) with its arguments from a JSON object. See syncular.cluster_call.';

CREATE FUNCTION syncular.cluster_call(call text, args jsonb, apply boolean DEFAULT true) RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  result jsonb;
BEGIN
  IF apply THEN
    RETURN syncular._cluster_dispatch(call, args);
  END IF;
  -- the check round: run the call in a subtransaction and roll it back (its locks go with it);
  -- an error of the call itself propagates unchanged
  BEGIN
    result := syncular._cluster_dispatch(call, args);
    RAISE EXCEPTION 'cluster call checked' USING ERRCODE = 'SYCHK';
  EXCEPTION WHEN SQLSTATE 'SYCHK' THEN
    NULL;
  END;
  RETURN result;
END
$$;
COMMENT ON FUNCTION syncular.cluster_call(text, jsonb, boolean) IS
'One shard''s part of a cluster-wide call made through the syncular_router extension (docs/scaling.md). '
'call: "ensure_schema" (args {ir, checkpoints?, appSchema?}; returns ensure_schema''s result; the app schema is '
'appSchema, else the registered one, else public; a checkpoint declaration carrying "shardDatabase" is installed only '
'when that is current_database(), the member removed), "set_scope_resolver" / "set_commit_validator" / '
'"set_reaction_planner" (args {fn}: a schema-qualified regprocedure text, or null to unregister), '
'"set_row_validator" (args {table, fn}); the setters return {"call": call}. apply false: the check round, '
'which runs the call and rolls it back, returning what it would return and raising what it would raise '
'(writes nothing; an ensure_schema bump does its DDL and row rewrites, then undoes them). Raises what the '
'named function raises, and sync.invalid_request (22023) for an unknown call or args that are not an object. '
'Owner-only, like the calls it runs. RFC 0007 §3.4 (ensureSchema), hooks.md.';

REVOKE EXECUTE ON FUNCTION syncular._cluster_dispatch(text, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION syncular.cluster_call(text, jsonb, boolean) FROM PUBLIC;
