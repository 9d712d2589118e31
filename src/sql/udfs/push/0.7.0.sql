CREATE FUNCTION syncular.push(p_partition text, p_actor_id text, p_client_id text, p_commits jsonb)
RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  compiled jsonb;
  frames jsonb[];
  c jsonb;
  o jsonb;
  ops jsonb[];
  tables jsonb;
  tbl jsonb;
  row_id text;
  resp jsonb;
  out jsonb[] := '{}';
  f jsonb;
  r jsonb;
  results jsonb[];
  commit_in jsonb;
  by_id jsonb;
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

  -- every step below is linear in the operations: arrays grow in place (never a jsonb copied
  -- per element), tables and commits are looked up by key
  tables := (SELECT jsonb_object_agg(t->>'name', t) FROM jsonb_array_elements(compiled->'tables') t);
  frames := ARRAY[jsonb_build_object(
    'type', 'REQ_HEADER', 'clientId', p_client_id,
    'schemaVersion', (compiled->>'version')::int,
    'logEpoch', syncular._producer_epoch(p_partition, p_actor_id, p_client_id))];
  FOR c IN SELECT * FROM jsonb_array_elements(p_commits) LOOP
    IF jsonb_typeof(c->'operations') IS DISTINCT FROM 'array' THEN
      PERFORM syncular._raise('sync.invalid_request', 'each commit needs an operations array',
        jsonb_build_object('clientCommitId', c->'clientCommitId'));
    END IF;
    ops := '{}';
    FOR o IN SELECT * FROM jsonb_array_elements(c->'operations') LOOP
      tbl := tables -> (o->>'table');
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
      'clientCommitId', c->>'clientCommitId', 'operations', to_jsonb(ops));
  END LOOP;

  resp := syncular.debug_render(syncular.handle(syncular.debug_encode(jsonb_build_object(
    'magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request', 'frames', to_jsonb(frames))),
    p_partition, p_actor_id));

  -- PUSH_RESULT frames, in commit order, with rows decoded and bitmaps named; a commit's input
  -- is the first with its clientCommitId
  by_id := (SELECT jsonb_object_agg(k.id, k.c) FROM (SELECT DISTINCT ON (cc->>'clientCommitId')
              cc->>'clientCommitId' AS id, cc AS c FROM jsonb_array_elements(p_commits) WITH ORDINALITY AS x(cc, n)
             WHERE cc->>'clientCommitId' IS NOT NULL ORDER BY cc->>'clientCommitId', n) k);
  FOR f IN SELECT * FROM jsonb_array_elements(resp->'frames') LOOP
    IF f->>'type' = 'PUSH_RESULT' THEN
      results := '{}';
      commit_in := by_id -> (f->>'clientCommitId');
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
      out := out || (f - 'type' || jsonb_build_object('results', to_jsonb(results)));
    ELSIF f->>'type' = 'PUSH_RESULT_DETAILS' AND cardinality(out) > 0 THEN
      out[cardinality(out)] := out[cardinality(out)] || jsonb_build_object('details', f->'entries');
    END IF;
  END LOOP;
  RETURN to_jsonb(out);
END $$;
