-- syncular install script, part 50: SQL producers.
-- syncular.push / syncular.pull take and return JSON (rows as objects keyed by column name) and
-- run the same engine as clients: they build an SSP2 wire-3 request, serve it with
-- syncular.handle(), and render the response.  For backend code (jobs, admin tools, triggers in
-- other systems) and for debugging.  push and pull are SECURITY DEFINER (like handle), so a role
-- with EXECUTE on them needs no privileges on the catalog.

-- The partition's log epoch, acquiring it (one header-only round) when the partition is new.
CREATE FUNCTION syncular._producer_epoch(p_partition text, p_actor_id text, p_client_id text)
RETURNS text LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  epoch text;
  compiled jsonb;
  resp jsonb;
BEGIN
  SELECT r.log_epoch INTO epoch FROM syncular.sync_partition_registry r WHERE r.partition = p_partition;
  IF epoch IS NOT NULL THEN
    RETURN epoch;
  END IF;
  SELECT s.compiled INTO compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no schema is registered; call syncular.ensure_schema first', NULL);
  END IF;
  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
    'frames', jsonb_build_array(
      jsonb_build_object('type', 'REQ_HEADER', 'clientId', p_client_id,
                         'schemaVersion', (compiled->>'version')::int),
      jsonb_build_object('type', 'PULL_HEADER', 'limitCommits', 0, 'limitSnapshotRows', 0,
                         'maxSnapshotPages', 0, 'accept', 1)))),
    p_partition, p_actor_id));
  RETURN resp->'frames'->0->>'logEpoch';
END $$;

-- Names of the columns marked in a conflictColumns bitmap (presence layout, LSB first).
CREATE FUNCTION syncular._bitmap_columns(p_table text, p_bitmap_b64 text)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(jsonb_agg(c.col->'name' ORDER BY c.ord), '[]'::jsonb)
    FROM syncular.sync_settings s,
         jsonb_array_elements(s.compiled->'tables') t(tbl),
         jsonb_array_elements(t.tbl->'columns') WITH ORDINALITY c(col, ord)
   WHERE s.id = 1 AND t.tbl->>'name' = p_table AND p_bitmap_b64 IS NOT NULL
     AND length(decode(p_bitmap_b64, 'base64')) > (c.ord - 1) / 8
     -- get_bit numbers bits LSB-first within each byte, as the bitmap does
     AND get_bit(decode(p_bitmap_b64, 'base64'), (c.ord - 1)::int) = 1
$$;

CREATE FUNCTION syncular.push(p_partition text, p_actor_id text, p_client_id text, p_commits jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled jsonb;
  frames jsonb;
  c jsonb;
  o jsonb;
  ops jsonb;
  tbl jsonb;
  row_id text;
  resp jsonb;
  out jsonb := '[]'::jsonb;
  f jsonb;
  r jsonb;
  results jsonb;
  commit_in jsonb;
BEGIN
  IF p_partition IS NULL OR p_actor_id IS NULL OR p_client_id IS NULL THEN
    PERFORM syncular._raise('sync.invalid_request', 'partition, actor_id and client_id are required', NULL);
  END IF;
  IF jsonb_typeof(p_commits) IS DISTINCT FROM 'array' OR jsonb_array_length(p_commits) = 0 THEN
    PERFORM syncular._raise('sync.invalid_request', 'commits must be a non-empty JSON array', NULL);
  END IF;
  SELECT s.compiled INTO compiled FROM syncular.sync_settings s WHERE s.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no schema is registered; call syncular.ensure_schema first', NULL);
  END IF;

  frames := jsonb_build_array(jsonb_build_object(
    'type', 'REQ_HEADER', 'clientId', p_client_id,
    'schemaVersion', (compiled->>'version')::int,
    'logEpoch', syncular._producer_epoch(p_partition, p_actor_id, p_client_id)));
  FOR c IN SELECT * FROM jsonb_array_elements(p_commits) LOOP
    IF jsonb_typeof(c->'operations') IS DISTINCT FROM 'array' THEN
      PERFORM syncular._raise('sync.invalid_request', 'each commit needs an operations array',
        jsonb_build_object('clientCommitId', c->'clientCommitId'));
    END IF;
    ops := '[]'::jsonb;
    FOR o IN SELECT * FROM jsonb_array_elements(c->'operations') LOOP
      SELECT t INTO tbl FROM jsonb_array_elements(compiled->'tables') t WHERE t->>'name' = o->>'table';
      IF tbl IS NULL THEN
        PERFORM syncular._raise('sync.unknown_table', 'table is not served',
          jsonb_build_object('table', o->'table'));
      END IF;
      row_id := coalesce(o->>'rowId', o->'row'->>(tbl->>'primaryKey'));
      IF row_id IS NULL THEN
        PERFORM syncular._raise('sync.invalid_request', 'an operation needs rowId or a row with its primary key',
          jsonb_build_object('table', o->'table'));
      END IF;
      ops := ops || jsonb_strip_nulls(jsonb_build_object(
        'table', o->>'table', 'rowId', row_id,
        'op', coalesce(o->>'op', 'upsert'),
        'baseVersion', o->'baseVersion',
        'payload', CASE WHEN coalesce(o->>'op', 'upsert') = 'upsert'
                        THEN encode(syncular.encode_sparse_row(o->>'table', o->'row'), 'base64') END));
    END LOOP;
    frames := frames || jsonb_build_object('type', 'PUSH_COMMIT',
      'clientCommitId', c->>'clientCommitId', 'operations', ops);
  END LOOP;

  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', frames)),
    p_partition, p_actor_id));

  -- PUSH_RESULT frames, in commit order, with rows decoded and bitmaps named
  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    IF f->>'type' = 'PUSH_RESULT' THEN
      results := '[]'::jsonb;
      SELECT cc INTO commit_in FROM jsonb_array_elements(p_commits) cc
        WHERE cc->>'clientCommitId' = f->>'clientCommitId' LIMIT 1;
      FOR r IN SELECT * FROM jsonb_array_elements(f->'results') LOOP
        IF r ? 'serverRow' THEN
          r := r || jsonb_build_object(
            'serverRow', syncular.decode_row(
               commit_in->'operations'->((r->>'opIndex')::int)->>'table',
               decode(r->>'serverRow', 'base64')),
            'conflictColumns', syncular._bitmap_columns(
               commit_in->'operations'->((r->>'opIndex')::int)->>'table',
               r->>'conflictColumns'));
        END IF;
        results := results || r;
      END LOOP;
      out := out || (f - 'type' || jsonb_build_object('results', results));
    ELSIF f->>'type' = 'PUSH_RESULT_DETAILS' THEN
      out := jsonb_set(out, ARRAY[(jsonb_array_length(out) - 1)::text, 'details'], f->'entries');
    END IF;
  END LOOP;
  RETURN out;
END $$;

COMMENT ON FUNCTION syncular.push(text, text, text, jsonb) IS
'Pushes commits from SQL through the same engine as clients (SPEC §6): builds a wire-3 request, serves it with '
'syncular.handle() in the caller''s transaction, and returns one result per commit. '
'commits: [{"clientCommitId": text, "operations": [{"table": text, "op": "upsert"|"delete", "rowId"?: text, '
'"baseVersion"?: int (absent = last write wins, 0 = insert intent), "row"?: {column: value}}]}] — the row is sparse: '
'only its keys are written; the primary key is required; bytes as base64. '
'Returns [{"clientCommitId", "status": "applied"|"cached"|"rejected", "commitSeq"?, "results": [{"opIndex", "status", '
'"code"?, "message"?, "retryable"?, "serverVersion"?, "serverRow"?: {...}, "conflictColumns"?: [names]}], "details"?}]. '
'Raises what syncular.handle() raises for request-level errors (e.g. sync.invalid_client_id 22023, '
'sync.too_many_operations 54000), sync.unknown_table (42P01) for an unknown table, '
'sync.storage.schema_not_registered (55000) before ensure_schema. Partition state (epoch) is acquired on first use.';

CREATE FUNCTION syncular.pull(p_partition text, p_actor_id text, p_client_id text, p_subscriptions jsonb,
                              p_limits jsonb DEFAULT '{}'::jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled jsonb;
  frames jsonb;
  s jsonb;
  resp jsonb;
  f jsonb;
  sections jsonb := '[]'::jsonb;
  cur jsonb;
  seg jsonb;
  changes jsonb;
BEGIN
  IF jsonb_typeof(p_subscriptions) IS DISTINCT FROM 'array' THEN
    PERFORM syncular._raise('sync.invalid_request', 'subscriptions must be a JSON array', NULL);
  END IF;
  SELECT st.compiled INTO compiled FROM syncular.sync_settings st WHERE st.id = 1;
  IF compiled IS NULL THEN
    PERFORM syncular._raise('sync.storage.schema_not_registered',
      'no schema is registered; call syncular.ensure_schema first', NULL);
  END IF;
  frames := jsonb_build_array(
    jsonb_build_object('type', 'REQ_HEADER', 'clientId', p_client_id,
      'schemaVersion', (compiled->>'version')::int,
      'logEpoch', syncular._producer_epoch(p_partition, p_actor_id, p_client_id)),
    jsonb_build_object('type', 'PULL_HEADER',
      'limitCommits', coalesce((p_limits->>'limitCommits')::int, 0),
      'limitSnapshotRows', coalesce((p_limits->>'limitSnapshotRows')::int, 0),
      'maxSnapshotPages', coalesce((p_limits->>'maxSnapshotPages')::int, 0),
      'accept', 1));
  FOR s IN SELECT * FROM jsonb_array_elements(p_subscriptions) LOOP
    frames := frames || jsonb_strip_nulls(jsonb_build_object('type', 'SUBSCRIPTION',
      'id', s->>'id', 'table', s->>'table', 'scopes', coalesce(s->'scopes', '{}'::jsonb),
      'cursor', coalesce((s->>'cursor')::bigint, -1), 'bootstrapState', s->'bootstrapState'));
  END LOOP;

  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', frames)),
    p_partition, p_actor_id));

  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    CASE f->>'type'
    WHEN 'SUB_START' THEN
      cur := (f - 'type') || '{"commits": [], "rows": []}'::jsonb;
    WHEN 'COMMIT' THEN
      -- one aggregate, not an append per change: a commit of SQL writes can hold 100,000 changes
      SELECT coalesce(jsonb_agg(jsonb_build_object('table', f->'tables'->((x.ch->>'tableIndex')::int)) ||
               (x.ch - 'tableIndex' - 'row') ||
               CASE WHEN x.ch ? 'row' THEN jsonb_build_object('row', syncular.decode_row(
                      f->'tables'->>((x.ch->>'tableIndex')::int), decode(x.ch->>'row', 'base64')))
                    ELSE '{}'::jsonb END ORDER BY x.n), '[]'::jsonb)
        INTO changes
        FROM jsonb_array_elements(f->'changes') WITH ORDINALITY AS x(ch, n);
      cur := jsonb_set(cur, '{commits}', cur->'commits' || jsonb_build_object(
        'commitSeq', f->'commitSeq', 'createdAtMs', f->'createdAtMs', 'actorId', f->'actorId',
        'changes', changes));
    WHEN 'SEGMENT_INLINE' THEN
      seg := syncular.debug_render(decode(f->>'payload', 'base64'));
      cur := jsonb_set(cur, '{rows}', cur->'rows' || coalesce((
        SELECT jsonb_agg(jsonb_build_object('serverVersion', y.rw->'serverVersion', 'row', y.rw->'values')
                         ORDER BY x.n, y.m)
          FROM jsonb_array_elements(seg->'blocks') WITH ORDINALITY AS x(blk, n),
               jsonb_array_elements(x.blk) WITH ORDINALITY AS y(rw, m)), '[]'::jsonb));
    WHEN 'SUB_END' THEN
      sections := sections || (cur || (f - 'type'));
    ELSE
      NULL;
    END CASE;
  END LOOP;
  RETURN sections;
END $$;

COMMENT ON FUNCTION syncular.pull(text, text, text, jsonb, jsonb) IS
'Pulls from SQL through the same engine as clients (SPEC §4): builds a wire-3 request, serves it with '
'syncular.handle() and returns one section per subscription in request order. '
'subscriptions: [{"id": text, "table": text, "scopes": {variable: [values]}, "cursor"?: int (default -1 = bootstrap), '
'"bootstrapState"?: json}]; limits: {"limitCommits", "limitSnapshotRows", "maxSnapshotPages"} (0 or absent = defaults). '
'Returns [{"id", "status": "active"|"revoked"|"reset", "reasonCode", "effectiveScopes", "bootstrap", "commits": '
'[{"commitSeq", "createdAtMs", "actorId", "changes": [{"table", "rowId", "op", "rowVersion"?, "scopes", "row"?: {...}}]}], '
'"rows": [{"serverVersion", "row": {...}}], "nextCursor", "bootstrapState"?}]. Raises what syncular.handle() raises for '
'request-level errors (sync.invalid_subscription 22023, sync.unknown_table 42P01, ...).';
